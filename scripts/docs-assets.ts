// npm run docs:assets: the document and the reference page's files (Scalar's browser build
// under a versioned name, src/openapi/docs-init.js) into dist/assets at the paths they are
// served from; wrangler.toml's [build] and npm's pretest run it. Quiet unless it fails.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DOCS_ASSETS, SCALAR_VERSION } from "../src/operations/docs.ts";
import { getOpenApiDocument } from "../src/operations/index.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const outDir = path.join(root, "dist", "assets");

function fail(message: string): never {
  console.error(`docs:assets: ${message}`);
  process.exit(1);
}

const packageDir = path.join(root, "node_modules", "@scalar", "api-reference");
if (!existsSync(path.join(packageDir, "package.json"))) {
  fail("@scalar/api-reference is not installed: run npm install.");
}
const { version } = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as {
  version: string;
};
if (version !== SCALAR_VERSION) {
  fail(
    `node_modules holds @scalar/api-reference ${version}, the page expects ${SCALAR_VERSION} (src/operations/docs.ts): run npm install, or change both pins together.`,
  );
}

// The build's trailing source-map comment would make devtools ask for a file we do not serve.
const renderer = readFileSync(
  path.join(packageDir, "dist", "browser", "standalone.js"),
  "utf8",
).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");
const init = readFileSync(path.join(root, "src", "openapi", "docs-init.js"), "utf8");

const document = readFileSync(path.join(root, "src", "openapi", "openapi.json"), "utf8");

const files: Array<[string, string]> = [
  [`/v1${getOpenApiDocument.path}`, JSON.stringify(JSON.parse(document))],
  [DOCS_ASSETS.renderer.path, renderer],
  [DOCS_ASSETS.init.path, init],
];

rmSync(outDir, { recursive: true, force: true });
for (const [urlPath, content] of files) {
  const file = path.join(outDir, ...urlPath.split("/").filter(Boolean));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}
