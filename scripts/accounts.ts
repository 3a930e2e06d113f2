// npm run accounts -- list|disable|enable ... [--env staging|production | --persist-to DIR]:
// the platform's accounts, through the same database paths as `npm run keys` (scripts/d1.ts).
// Grammar: scripts/account-cli.ts; docs/platform.md, "The operator".
import { AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS } from "../src/config.ts";
import { formatAccountTable, parseAccountArgs, USAGE } from "./account-cli.ts";
import {
  disableAccountStatements,
  enableAccountStatement,
  LIST_ACCOUNTS_STATEMENT,
  type ListedAccount,
  toListedAccount,
} from "./account-statements.ts";
import { d1ExecuteOrExit, type Row } from "./d1.ts";
import { commandLineOrExit } from "./operator-cli.ts";

const args = commandLineOrExit(() => parseAccountArgs(process.argv.slice(2)), USAGE);

const where = args.env ? `${args.env} (remote)` : "local";

const execute = (...statements: string[]) =>
  d1ExecuteOrExit({ env: args.env, persistTo: args.persistTo }, statements);

/** The one account a statement answered, or exit 1 saying there is none with that id. */
function theAccount(rows: Row[] | undefined, id: string): ListedAccount {
  const [row] = rows ?? [];
  if (row) return toListedAccount(row);
  console.error(`error: no account with id ${id} in ${where} (see \`npm run accounts -- list\`)`);
  process.exit(1);
}

switch (args.command) {
  case "list": {
    const accounts = ((await execute(LIST_ACCOUNTS_STATEMENT))[0] ?? []).map(toListedAccount);
    console.log(args.json ? JSON.stringify(accounts, null, 2) : formatAccountTable(accounts));
    break;
  }
  case "disable": {
    const [disabled, ended] = await execute(
      ...disableAccountStatements(args.id, Math.floor(Date.now() / 1000)),
    );
    const account = theAccount(disabled, args.id);
    console.log(
      `Disabled account ${account.id} ("${account.displayName}") in ${where}: it cannot sign in, ${ended?.length ?? 0} session(s) ended, and its ${account.activeKeys} active key(s) are refused everywhere within ${AUTH_CACHE_TTL_MS / 1000} seconds of the D1 read replicas having the change (docs/keys.md, "Revocation bound").`,
    );
    break;
  }
  case "enable": {
    const account = theAccount((await execute(enableAccountStatement(args.id)))[0], args.id);
    console.log(
      `Enabled account ${account.id} ("${account.displayName}") in ${where}: it may sign in again, and its ${account.activeKeys} active key(s) work again within ${AUTH_UNKNOWN_TTL_MS / 1000} seconds.`,
    );
    break;
  }
}
