// The release workflows' glue: reads a wrangler command's output on standard input and
// prints one `version-id=<id>` line for $GITHUB_OUTPUT (parsers: scripts/wrangler-output.ts).
//   ... deployments status --env E --json | npm run -s rollout -- serving [--allow-none]
//   ... versions upload --env E            | npm run -s rollout -- uploaded
// --allow-none: an environment that has never been deployed (no deployment in the
// input) prints `version-id=` and a warning instead of failing: nothing to roll back to.
import { text } from "node:stream/consumers";
import { OutputError, servingVersion, uploadedVersion } from "./wrangler-output.ts";

const USAGE = `usage: <output of wrangler deployments status --json> | npm run -s rollout -- serving [--allow-none]
       <output of wrangler versions upload>             | npm run -s rollout -- uploaded`;

function report(level: "error" | "warning", message: string): void {
  // GitHub turns these lines into annotations; standard output is $GITHUB_OUTPUT.
  console.error(
    process.env.GITHUB_ACTIONS === "true" ? `::${level}::${message}` : `${level}: ${message}`,
  );
}

const [command, ...flags] = process.argv.slice(2);
const allowNone = flags.includes("--allow-none");
const known = command === "uploaded" ? [] : ["--allow-none"];
if ((command !== "serving" && command !== "uploaded") || flags.some((f) => !known.includes(f))) {
  console.error(`error: expected serving [--allow-none] or uploaded\n\n${USAGE}`);
  process.exit(2);
}

const input = await text(process.stdin);
try {
  if (command === "uploaded") {
    console.log(`version-id=${uploadedVersion(input)}`);
  } else if (allowNone && !input.includes("{")) {
    report(
      "warning",
      "no deployment serves this environment yet: there is nothing to roll back to",
    );
    console.log("version-id=");
  } else {
    console.log(`version-id=${servingVersion(input)}`);
  }
} catch (err) {
  if (!(err instanceof OutputError)) throw err;
  report("error", err.message);
  process.exit(1);
}
