// npm run preview [-- NAME] [--dry-run]: uploads the API and the platform as staging versions
// under the preview alias NAME (the git branch by default), each given the other's preview URL
// (WORKERS_DEV_SUBDOMAIN); never production, nor the MCP worker (docs/release.md).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import { experimental_readRawConfig } from "wrangler";
import { runWranglerForeground, wrangler } from "./wrangler.ts";

const PLATFORM_CONFIG = "platform/wrangler.toml";
const MCP_CONFIG = "mcp/wrangler.toml";

/** Preview aliases are DNS labels: lowercase letters, digits, hyphens; short. */
function toAlias(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
}

/** The staging worker's name in `config` (wrangler.toml or the platform's). */
const stagingName = (config: string) =>
  String(experimental_readRawConfig({ config }).rawConfig.env?.staging?.name);

/** The preview URL of `alias` of the staging worker of `config` (Cloudflare's format). */
export const previewUrl = (alias: string, config: string, subdomain: string) =>
  `https://${alias}-${stagingName(config)}.${subdomain}.workers.dev`;

if (import.meta.main) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { "dry-run": { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });

  if (values.help) {
    console.log("usage: [WORKERS_DEV_SUBDOMAIN=<subdomain>] npm run preview [-- NAME] [--dry-run]");
    process.exit(0);
  }

  // The current branch (nothing on a detached HEAD or outside a git checkout).
  const branch = () => spawnSync("git", ["branch", "--show-current"], { encoding: "utf8" }).stdout;
  const requested = positionals[0] ?? branch()?.trim() ?? "";
  const alias = toAlias(requested);
  if (!alias) {
    console.error("No preview name: pass one (npm run preview -- my-change) or run on a branch.");
    process.exit(2);
  }
  const dryRun = values["dry-run"] === true;
  const subdomain = process.env.WORKERS_DEV_SUBDOMAIN || (dryRun ? "example" : "");

  const upload = (config: string, vars: Record<string, string>, outdir: string) => [
    ...["versions", "upload", "-c", config, "--env", "staging", "--preview-alias", alias],
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    // An absolute --outdir: wrangler puts the bundle beside the config and a note beside us.
    ...(dryRun
      ? ["--dry-run", "--outdir", path.resolve(outdir)]
      : ["--message", `preview ${alias}`]),
  ];
  if (dryRun) {
    // Staging's MCP worker as a preview's /mcp reaches it: bundled and checked, never uploaded.
    const mcp = ["versions", "upload", "-c", MCP_CONFIG, "--env", "staging", "--dry-run"];
    wrangler([...mcp, "--outdir", path.resolve("dist/preview-mcp")]);
  } else {
    console.log(
      `The preview's /mcp is served by staging's deployed MCP worker (a service binding reaches no preview).`,
    );
  }
  if (!subdomain) {
    console.log(
      `Preview "${alias}" of the staging API only (staging data): the platform's preview needs its own address, <NAME>-<worker>.<subdomain>.workers.dev; set WORKERS_DEV_SUBDOMAIN to the account's workers.dev subdomain.`,
    );
    runWranglerForeground(upload("wrangler.toml", {}, "dist/preview"));
  } else {
    const api = previewUrl(alias, "wrangler.toml", subdomain);
    const platform = previewUrl(alias, PLATFORM_CONFIG, subdomain);
    console.log(
      `Preview "${alias}" of the staging API (${api}) and developer platform (${platform}), on staging data.`,
    );
    // The preview's own address is the API's one address: its /mcp responds there alone.
    const vars = { PLATFORM_ORIGIN: platform, API_ORIGINS: api };
    wrangler(upload("wrangler.toml", vars, "dist/preview"));
    runWranglerForeground(upload(PLATFORM_CONFIG, vars, "dist/preview-platform"));
  }
}
