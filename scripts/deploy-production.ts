// npm run deploy:production [-- --yes]: by hand, after a person types "production": remote
// migrations, then `wrangler deploy --env production` of the MCP worker, the API and the
// platform. CI never runs it: the release workflow rolls out gradually (docs/release.md).
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
