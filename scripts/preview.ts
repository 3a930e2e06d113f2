// npm run preview [-- NAME] [--dry-run]
// Uploads the current code as a new version of the STAGING worker, without deploying
// it, reachable at its own preview URL and at the alias NAME (default: the current git
// branch): `wrangler versions upload --env staging --preview-alias NAME`.
// A preview version runs with staging's bindings (staging D1, staging rate limits):
// there is deliberately no way to preview against production.
// --dry-run bundles and checks without an account (CI runs it).
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { runWranglerForeground } from "./wrangler.ts";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { "dry-run": { type: "boolean" }, help: { type: "boolean", short: "h" } },
});

if (values.help) {
  console.log("usage: npm run preview [-- NAME] [--dry-run]");
  process.exit(0);
}

/** Preview aliases are DNS labels: lowercase letters, digits, hyphens; short. */
function toAlias(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
}

// The current branch (nothing on a detached HEAD or outside a git checkout).
const branch = () => spawnSync("git", ["branch", "--show-current"], { encoding: "utf8" }).stdout;
const requested = positionals[0] ?? branch()?.trim() ?? "";
const alias = toAlias(requested);
if (!alias) {
  console.error("No preview name: pass one (npm run preview -- my-change) or run on a branch.");
  process.exit(2);
}

const args = ["versions", "upload", "--env", "staging", "--preview-alias", alias];
if (values["dry-run"]) args.push("--dry-run", "--outdir", "dist/preview");
else args.push("--message", `preview ${alias}`);
console.log(`Preview "${alias}" of the staging worker (staging data only).`);
runWranglerForeground(args);
