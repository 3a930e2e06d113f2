// Writes src/schema.ts, the package's types, from the API's OpenAPI document with
// openapi-typescript; `--check` fails when it is stale. The package's version is the API's
// (the document's info.version): both modes fail when they differ. openapi-typescript
// drives TypeScript 5's JavaScript API, which TypeScript 7 lacks: the package's own
// devDependency typescript 5.9 is there for it alone (the build runs the root's 7).
import { readFileSync, writeFileSync } from "node:fs";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

/** The document the API serves at GET /v1/openapi.json, as `npm run openapi` writes it. */
const DOCUMENT = new URL("../../../src/openapi/openapi.json", import.meta.url);
const SCHEMA = new URL("../src/schema.ts", import.meta.url);
const PACKAGE = new URL("../package.json", import.meta.url);

const document = JSON.parse(readFileSync(DOCUMENT, "utf8"));
// A property with a `default` (NewPet.status) stays optional: the server fills it in.
const fresh =
  COMMENT_HEADER + astToString(await openapiTS(document, { defaultNonNullable: false }));

const { version } = JSON.parse(readFileSync(PACKAGE, "utf8"));
if (version !== document.info.version) {
  console.error(
    `packages/client/package.json has version ${version}, the API ${document.info.version}: make them equal.`,
  );
  process.exit(1);
}

if (process.argv.includes("--check")) {
  if (readFileSync(SCHEMA, "utf8") !== fresh) {
    console.error(
      "packages/client/src/schema.ts is stale: run `npm run client:types` and commit it.",
    );
    process.exit(1);
  }
  console.log("packages/client/src/schema.ts is up to date.");
} else {
  writeFileSync(SCHEMA, fresh);
  console.log("wrote packages/client/src/schema.ts");
}
