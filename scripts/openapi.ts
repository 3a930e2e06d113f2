// Writes src/openapi/openapi.json from the operation table, and src/openapi/worker.json, what
// the worker takes from it without bundling it: the version and the CORS header lists.
// `--check` fails when either is stale.
import { readFileSync, writeFileSync } from "node:fs";
import packageJson from "../package.json" with { type: "json" };
import { buildOpenApiDocument, corsHeaders } from "../src/openapi/document.ts";

const document = buildOpenApiDocument();
const files: Array<[URL, unknown]> = [
  [new URL("../src/openapi/openapi.json", import.meta.url), document],
  [
    new URL("../src/openapi/worker.json", import.meta.url),
    { version: packageJson.version, cors: corsHeaders(document) },
  ],
];

const check = process.argv.includes("--check");
for (const [target, value] of files) {
  const name = `src/openapi/${target.pathname.split("/").at(-1)}`;
  const fresh = `${JSON.stringify(value, null, 2)}\n`;
  if (!check) {
    writeFileSync(target, fresh);
    console.log(`wrote ${name}`);
  } else if (readFileSync(target, "utf8") !== fresh) {
    console.error(`${name} is stale: run \`npm run openapi\` and commit it.`);
    process.exitCode = 1;
  } else {
    console.log(`${name} is up to date.`);
  }
}
