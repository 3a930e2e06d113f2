// The package's build, its `prepack` (so `npm pack` ships what it builds) and `npm run
// client:build`: dist/ holds ES modules and dist/cjs/ CommonJS, each with declarations,
// by the repository's TypeScript (7: the package's own 5.9 is openapi-typescript's alone).
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const TSC = fileURLToPath(new URL("../../../node_modules/typescript/bin/tsc", import.meta.url));

rmSync(`${PACKAGE}dist`, { recursive: true, force: true });
for (const config of ["tsconfig.json", "tsconfig.cjs.json"]) {
  const { status } = spawnSync(process.execPath, [TSC, "-p", `${PACKAGE}${config}`], {
    stdio: "inherit",
  });
  if (status !== 0) process.exit(status ?? 1);
}
// The package is "type": "module": this makes Node read dist/cjs/*.js as CommonJS.
writeFileSync(`${PACKAGE}dist/cjs/package.json`, '{ "type": "commonjs" }\n');
// The document's types (80 kB of declarations, no code) once: the ES side takes them from
// the CommonJS side, as an ES module may import from a CommonJS one.
writeFileSync(`${PACKAGE}dist/schema.d.ts`, 'export type * from "./cjs/schema.js";\n');
