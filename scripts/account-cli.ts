// What a person types after `npm run accounts --`, read with the operator commands'
// grammar (scripts/operator-cli.ts; test/node/accounts-cli.test.ts runs this very parser).

import type { ListedAccount } from "./account-statements.ts";
import { parseAccountId } from "./account-statements.ts";
import type { D1Target } from "./d1.ts";
import {
  formatTable,
  noPositionals,
  onePositional,
  parseCommand,
  tableTime,
  UsageError,
  WHERE,
  WHERE_OPTIONS,
  WHERE_USAGE,
} from "./operator-cli.ts";

export { UsageError };

export const USAGE = `usage:
  npm run accounts -- list [--json] [<where>]
  npm run accounts -- disable <id> [<where>]
  npm run accounts -- enable <id> [<where>]
  npm run accounts -- help            (also --help or -h)

  <id>        an account's id, acct_ and 22 characters (see list)
${WHERE_USAGE}

  The developer platform's accounts. disable: the account cannot sign in, its sessions
  end now, and the API refuses its keys within the revocation bound (they are not
  revoked: enable gives them back). enable: it may sign in again.`;

export type AccountCommand =
  | ({ command: "list"; json: boolean } & D1Target)
  | ({ command: "disable" | "enable"; id: string } & D1Target)
  | { command: "help" };

const OPTIONS = { json: { type: "boolean" }, ...WHERE_OPTIONS } as const;
type Option = keyof typeof OPTIONS;

/** The options each command takes. */
const COMMANDS = {
  list: ["json", ...WHERE],
  disable: [...WHERE],
  enable: [...WHERE],
} as const satisfies Record<string, readonly Option[]>;

export function parseAccountArgs(argv: readonly string[]): AccountCommand {
  const parsed = parseCommand<Option>(argv, COMMANDS, OPTIONS);
  if (parsed === "help") return { command: "help" };
  const { target } = parsed;
  const command = parsed.command as keyof typeof COMMANDS;
  if (command === "list") {
    noPositionals(parsed);
    return { command, json: parsed.one("json") === "true", ...target };
  }
  const id = onePositional(parsed, parseAccountId, {
    one: "account id",
    missing: "the account's id (see `npm run accounts -- list`)",
    wrong: (text) =>
      `${text} is not an account id: acct_ and 22 letters, digits, - or _ (see \`npm run accounts -- list\`)`,
  });
  return { command, id, ...target };
}

const COLUMNS: ReadonlyArray<readonly [string, (account: ListedAccount) => string]> = [
  ["id", (a) => a.id],
  ["name", (a) => a.displayName],
  ["created", (a) => tableTime(a.createdAt, "-")],
  ["disabled", (a) => tableTime(a.disabledAt, "-")],
  ["active keys", (a) => String(a.activeKeys)],
];

/** `list` for people: one aligned row per account, times in UTC without milliseconds. */
export function formatAccountTable(accounts: readonly ListedAccount[]): string {
  return formatTable(COLUMNS, accounts, "No accounts.");
}
