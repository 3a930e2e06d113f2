// When `npm run deploy:production` may go on (Node-free: tested in workerd): a person types the
// environment's name, `--yes` skips it, and without a terminal and `--yes` it refuses.

const ENVIRONMENT = "production";

export const USAGE = `usage: npm run deploy:production [-- --yes]

  Deploys the working tree to PRODUCTION at once: remote D1 migrations, then
  wrangler deploy --env production of the API and of the developer platform
  (platform/wrangler.toml). It asks you to type "${ENVIRONMENT}" first;
  --yes skips the question (scripts). The usual path is the release workflow's
  gradual rollout (docs/release.md).`;

export class UsageError extends Error {}

export type Decision =
  | { action: "deploy" }
  | { action: "ask"; question: string }
  | { action: "refuse"; message: string };

export function decide(argv: readonly string[], interactive: boolean): Decision {
  const unknown = argv.filter((a) => a !== "--yes" && a !== "-y");
  if (unknown.length > 0) throw new UsageError(`unknown argument ${JSON.stringify(unknown[0])}`);
  if (argv.length > 0) return { action: "deploy" };
  if (!interactive) {
    return {
      action: "refuse",
      message:
        "npm run deploy:production asks for confirmation and there is no terminal to ask on: nothing was deployed. Pass --yes to deploy without asking (npm run deploy:production -- --yes).",
    };
  }
  return {
    action: "ask",
    question: `This deploys the working tree to ${ENVIRONMENT.toUpperCase()}, all traffic at once, after its remote D1 migrations.\nType "${ENVIRONMENT}" to go on: `,
  };
}

/** Only the environment's name, typed out, is a yes. */
export function confirmed(answer: string): boolean {
  return answer.trim() === ENVIRONMENT;
}
