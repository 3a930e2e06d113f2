// npm run client:build: dist/ holds the package as ES modules and dist/cjs/ as CommonJS,
// each with its declarations, both by the root's TypeScript.
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";

const PACKAGE = new URL("..", import.meta.url).pathname;

rmSync(`${PACKAGE}dist`, { recursive: true, force: true });
for (const config of ["tsconfig.json", "tsconfig.cjs.json"]) {
  const { status } = spawnSync("tsc", ["-p", `${PACKAGE}${config}`], { stdio: "inherit" });
  if (status !== 0) process.exit(status ?? 1);
}
// The package is "type": "module": this makes Node read dist/cjs/*.js as CommonJS.
writeFileSync(`${PACKAGE}dist/cjs/package.json`, '{ "type": "commonjs" }\n');
// The document's types (80 kB of declarations, no code) once: the ES side takes them from
// the CommonJS side, as an ES module may import from a CommonJS one.
writeFileSync(`${PACKAGE}dist/schema.d.ts`, 'export type * from "./cjs/schema.js";\n');
