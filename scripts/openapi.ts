// Writes src/openapi/openapi.json from the operation table, and src/openapi/worker.json, what
// the worker takes from it without bundling it: the version, the CORS header lists and the
// shape of each cached response; and mcp/src/tools.json, the MCP worker's tools derived from
// the same table (mcp/src/tools.ts). `--check` fails when any is stale.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { toolsFile } from "../mcp/src/tools.ts";
import packageJson from "../package.json" with { type: "json" };
import { buildOpenApiDocument, corsHeaders } from "../src/openapi/document.ts";
import { OPERATIONS } from "../src/operations/index.ts";

type Json = Record<string, Record<string, Record<string, Record<string, unknown>>>>;
const document = buildOpenApiDocument();

/**
 * Each cached operation's shape: a digest of its documented 200 (schemas, headers), part of
 * its cache key, so a response that changes shape (a new field) is never served from a
 * response cached before the change. Components are written out, so a change of one counts.
 */
function cacheShapes(): Record<string, string> {
  const components = document.components as Json;
  const resolved = (node: unknown): unknown =>
    Array.isArray(node)
      ? node.map(resolved)
      : node && typeof node === "object"
        ? "$ref" in node && typeof node.$ref === "string"
          ? resolved(
              node.$ref
                .split("/")
                .slice(2)
                .reduce<unknown>((at, name) => (at as Json)[name], components),
            )
          : Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolved(v)]))
        : node;
  const paths = document.paths as Json;
  return Object.fromEntries(
    OPERATIONS.filter((op) => op.conditional).map((op) => {
      const response = resolved(paths[op.path]?.[op.method]?.responses?.["200"]);
      const digest = createHash("sha256").update(JSON.stringify(response)).digest("base64url");
      return [op.operationId, digest.slice(0, 11)];
    }),
  );
}

const files: Array<[URL, unknown]> = [
  [new URL("../src/openapi/openapi.json", import.meta.url), document],
  [
    new URL("../src/openapi/worker.json", import.meta.url),
    { version: packageJson.version, cors: corsHeaders(document), shapes: cacheShapes() },
  ],
  [new URL("../mcp/src/tools.json", import.meta.url), toolsFile(OPERATIONS, document)],
];

const check = process.argv.includes("--check");
for (const [target, value] of files) {
  const name = target.pathname.slice(new URL("..", import.meta.url).pathname.length);
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
