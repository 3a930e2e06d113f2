// Writes src/openapi/openapi.json from the zod schemas; `--check` fails when it is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { buildOpenApiDocument } from "../src/openapi/document.ts";

const target = new URL("../src/openapi/openapi.json", import.meta.url);
const fresh = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv.includes("--check")) {
  const current = readFileSync(target, "utf8");
  if (current !== fresh) {
    console.error("src/openapi/openapi.json is stale: run `npm run openapi` and commit it.");
    process.exit(1);
  }
  console.log("src/openapi/openapi.json is up to date.");
} else {
  writeFileSync(target, fresh);
  console.log("wrote src/openapi/openapi.json");
}
