// npm run deploy:production [-- --yes]
// By hand: production's remote D1 migrations (once, for all workers), then `wrangler
// deploy --env production` of the MCP worker (first: the API's MCP binding needs it), the
// API and the developer platform (all traffic at once), after a person types "production"
// (scripts/deploy-confirm.ts).
// Without a terminal and without --yes it refuses (exit 2). CI never runs this: the
// release workflow rolls production out gradually (docs/release.md).
import { createInterface } from "node:readline/promises";
import { confirmed, decide, USAGE, UsageError } from "./deploy-confirm.ts";
import { runWranglerForeground, wrangler } from "./wrangler.ts";

let decision: ReturnType<typeof decide>;
try {
  decision = decide(process.argv.slice(2), Boolean(process.stdin.isTTY && process.stdout.isTTY));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  console.error(`error: ${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (decision.action === "refuse") {
  console.error(`error: ${decision.message}`);
  process.exit(2);
}
if (decision.action === "ask") {
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  const answer = await prompt.question(decision.question);
  prompt.close();
  if (!confirmed(answer)) {
    console.error("Not confirmed: nothing was deployed.");
    process.exit(1);
  }
}

wrangler(["d1", "migrations", "apply", "DB", "--remote", "--env", "production"]);
wrangler(["deploy", "-c", "mcp/wrangler.toml", "--env", "production"]);
wrangler(["deploy", "--env", "production"]);
runWranglerForeground(["deploy", "-c", "platform/wrangler.toml", "--env", "production"]);
