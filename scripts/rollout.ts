// npm run -s rollout -- serving [--allow-none] | uploaded | bookmark: reads what a wrangler
// command wrote for programs on standard input and prints `name=value` lines for
// $GITHUB_OUTPUT (scripts/wrangler-output.ts; docs/release.md).
import { text } from "node:stream/consumers";
import { parseArgs } from "node:util";
import * as output from "./wrangler-output.ts";

const USAGE = `usage: <output of wrangler deployments status --json> | npm run -s rollout -- serving [--allow-none]
       npm run -s rollout -- uploaded < <WRANGLER_OUTPUT_FILE_PATH of wrangler versions upload>
       <output of wrangler d1 time-travel info --json>  | npm run -s rollout -- bookmark`;

function report(level: "error" | "warning", message: string): void {
  // GitHub turns these lines into annotations; standard output is $GITHUB_OUTPUT.
  console.error(
    process.env.GITHUB_ACTIONS === "true" ? `::${level}::${message}` : `${level}: ${message}`,
  );
}

let command: string | undefined;
let allowNone: boolean;
try {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { "allow-none": { type: "boolean", default: false } },
  });
  [command] = positionals;
  allowNone = values["allow-none"];
  const known = ["serving", "uploaded", "bookmark"].includes(command ?? "");
  if (positionals.length !== 1 || !known || (allowNone && command !== "serving")) throw new Error();
} catch {
  console.error(`error: expected serving [--allow-none], uploaded or bookmark\n\n${USAGE}`);
  process.exit(2);
}

const input = await text(process.stdin);
try {
  if (command === "uploaded") {
    const { versionId, previewUrl } = output.uploadedVersion(input);
    console.log(`version-id=${versionId}`);
    if (previewUrl) console.log(`preview-url=${previewUrl}`);
  } else if (command === "bookmark") {
    console.log(`bookmark=${output.timeTravelBookmark(input)}`);
  } else if (allowNone && input.trim() === "") {
    report(
      "warning",
      "no deployment serves this environment yet: there is nothing to roll back to",
    );
    console.log("version-id=");
  } else {
    console.log(`version-id=${output.servingVersion(input)}`);
  }
} catch (err) {
  if (!(err instanceof output.OutputError)) throw err;
  report("error", err.message);
  process.exit(1);
}
