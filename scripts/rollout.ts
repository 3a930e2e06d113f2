// The release workflows' glue: reads a wrangler command's output on standard input and
// prints one `name=value` line for $GITHUB_OUTPUT (parsers: scripts/wrangler-output.ts).
//   ... deployments status --env E --json | npm run -s rollout -- serving [--allow-none]
//   ... versions upload --env E            | npm run -s rollout -- uploaded
//   ... d1 time-travel info DB --env E --json | npm run -s rollout -- bookmark   (bookmark=<b>)
// --allow-none: an environment that has never been deployed (no deployment in the
// input) prints `version-id=` and a warning instead of failing: nothing to roll back to.
import { text } from "node:stream/consumers";
import {
  OutputError,
  servingVersion,
  timeTravelBookmark,
  uploadedVersion,
} from "./wrangler-output.ts";

const USAGE = `usage: <output of wrangler deployments status --json> | npm run -s rollout -- serving [--allow-none]
       <output of wrangler versions upload>             | npm run -s rollout -- uploaded
       <output of wrangler d1 time-travel info --json>  | npm run -s rollout -- bookmark`;

function report(level: "error" | "warning", message: string): void {
  // GitHub turns these lines into annotations; standard output is $GITHUB_OUTPUT.
  console.error(
    process.env.GITHUB_ACTIONS === "true" ? `::${level}::${message}` : `${level}: ${message}`,
  );
}

const [command, ...flags] = process.argv.slice(2);
const allowNone = flags.includes("--allow-none");
const known = command === "serving" ? ["--allow-none"] : [];
if (
  !["serving", "uploaded", "bookmark"].includes(command ?? "") ||
  flags.some((f) => !known.includes(f))
) {
  console.error(`error: expected serving [--allow-none], uploaded or bookmark\n\n${USAGE}`);
  process.exit(2);
}

const input = await text(process.stdin);
try {
  if (command === "uploaded") {
    console.log(`version-id=${uploadedVersion(input)}`);
  } else if (command === "bookmark") {
    console.log(`bookmark=${timeTravelBookmark(input)}`);
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
