// npm run accounts -- list|disable|enable ... [<where>]: the platform's accounts, through the
// same database paths as `npm run keys` (scripts/d1.ts). docs/platform.md, "The operator".
import { AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS } from "../src/config.ts";
import type { ListedAccount } from "./account-statements.ts";
import * as sql from "./account-statements.ts";
import { d1ExecuteOrExit, type Row } from "./d1.ts";
import * as cli from "./operator-cli.ts";

export const { UsageError } = cli;

export const USAGE = `usage:
  npm run accounts -- list [--json] [<where>]
  npm run accounts -- disable <id> [<where>]
  npm run accounts -- enable <id> [<where>]
  npm run accounts -- help            (also --help or -h)

  <id>        an account's id, acct_ and 22 characters (see list)
${cli.WHERE_USAGE}

  The developer platform's accounts. disable: the account cannot sign in, its sessions
  end now, and the API refuses its keys within the revocation bound (they are not
  revoked: enable gives them back). enable: it may sign in again.`;

const COMMANDS = {
  list: { json: { type: "boolean" }, ...cli.WHERE },
  disable: cli.WHERE,
  enable: cli.WHERE,
} as const;

export function parseAccountArgs(argv: readonly string[]) {
  const parsed = cli.parseCommand(argv, COMMANDS);
  if (parsed === "help") return { command: parsed };
  const { command, values, positionals, target } = parsed;
  if (command === "list") {
    cli.noPositionals(command, positionals);
    return { command, json: values.json === true, ...target };
  }
  const id = cli.onePositional(command, positionals, sql.parseAccountId, {
    one: "account id",
    missing: "the account's id (see `npm run accounts -- list`)",
    wrong: "an account id: acct_ and 22 letters, digits, - or _ (see `npm run accounts -- list`)",
  });
  return { command, id, ...target };
}

/** `list` for people: one aligned row per account, times in UTC without milliseconds. */
export function formatAccountTable(accounts: readonly ListedAccount[]): string {
  const columns: [string, (a: ListedAccount) => string][] = [
    ["id", (a) => a.id],
    ["name", (a) => a.displayName],
    ["created", (a) => cli.tableTime(a.createdAt, "-")],
    ["disabled", (a) => cli.tableTime(a.disabledAt, "-")],
    ["active keys", (a) => String(a.activeKeys)],
  ];
  return cli.formatTable(columns, accounts, "No accounts.");
}

async function main() {
  const args = cli.commandLineOrExit(() => parseAccountArgs(process.argv.slice(2)), USAGE);
  const where = args.env ? `${args.env} (remote)` : "local";
  const execute = (...statements: string[]) => d1ExecuteOrExit(args, statements);
  /** The one account a statement returned, or exit 1 saying there is none with that id. */
  const theAccount = (rows: Row[] | undefined, id: string): ListedAccount => {
    if (rows?.[0]) return sql.toListedAccount(rows[0]);
    console.error(`error: no account with id ${id} in ${where} (see \`npm run accounts -- list\`)`);
    process.exit(1);
  };
  if (args.command === "list") {
    const accounts = ((await execute(sql.LIST_ACCOUNTS_STATEMENT))[0] ?? []).map(
      sql.toListedAccount,
    );
    console.log(args.json ? JSON.stringify(accounts, null, 2) : formatAccountTable(accounts));
  } else if (args.command === "disable") {
    const now = Math.floor(Date.now() / 1000);
    const [disabled, ended] = await execute(...sql.disableAccountStatements(args.id, now));
    const account = theAccount(disabled, args.id);
    console.log(
      `Disabled account ${account.id} ("${account.displayName}") in ${where}: it cannot sign in, ${ended?.length ?? 0} session(s) ended, and its ${account.activeKeys} active key(s) are refused everywhere within ${AUTH_CACHE_TTL_MS / 1000} seconds of the D1 read replicas having the change (docs/keys.md, "Revocation bound").`,
    );
  } else {
    const account = theAccount((await execute(sql.enableAccountStatement(args.id)))[0], args.id);
    console.log(
      `Enabled account ${account.id} ("${account.displayName}") in ${where}: it may sign in again, and its ${account.activeKeys} active key(s) work again within ${AUTH_UNKNOWN_TTL_MS / 1000} seconds.`,
    );
  }
}

if (import.meta.main) await main();
