// The grammar of `npm run accounts -- ...` (scripts/accounts.ts), run here in Node as
// the CLI runs it: every wrong word is one UsageError line (the CLI prints it with the
// usage and exits 2), never a crash. Its statements run in workerd: test/accounts.test.ts.
import { describe, expect, it } from "vitest";
import { formatAccountTable, parseAccountArgs, USAGE, UsageError } from "../../scripts/accounts.ts";
import { usageErrorOf } from "../support/usage-error.ts";

const ID = "acct_Ab-_0123456789abcdefgh";

function usageError(argv: string[]): string {
  return usageErrorOf(() => parseAccountArgs(argv), UsageError, JSON.stringify(argv));
}

describe("valid commands", () => {
  it.each([
    ["list", { json: false }],
    ["list --json", { json: true }],
    ["list --json --env production", { json: true, env: "production" }],
    ["list --persist-to=/tmp/d1", { json: false, persistTo: "/tmp/d1" }],
    [`disable ${ID}`, { id: ID }],
    [`disable --env staging ${ID}`, { id: ID, env: "staging" }],
    [`enable ${ID} --persist-to d`, { id: ID, persistTo: "d" }],
  ])("%s", (args, fields) => {
    const argv = args.split(" ");
    expect(parseAccountArgs(argv)).toEqual({ command: argv[0], ...fields });
  });

  it("help, --help or -h anywhere asks for the usage, which names every command and flag", () => {
    for (const argv of [["help"], ["--help"], ["list", "-h"], ["disable", ID, "--help"]]) {
      expect(parseAccountArgs(argv)).toEqual({ command: "help" });
    }
    for (const word of ["list", "disable", "enable", "--json", "--env", "--persist-to"]) {
      expect(USAGE).toContain(word);
    }
  });
});

it.each([
  [[], "a command is needed: list, disable or enable"],
  [["delete", ID], 'unknown command "delete": use list, disable, enable or help'],
  [["disable"], "disable needs the account's id (see `npm run accounts -- list`)"],
  [["enable", "acct_short"], /^"acct_short" is not an account id: acct_ and 22/],
  [["disable", `${ID}'; DROP TABLE accounts; --`], /is not an account id/],
  [["disable", ID, ID], "disable takes one account id, not 2 words"],
  [["list", "everything"], 'list takes no "everything"'],
  [["list", "--json=yes"], "--json takes no value"],
  [["disable", ID, "--json"], 'disable does not take "--json"'],
  [["list", "--env", "prod"], '--env must be staging or production, not "prod"'],
  [["list", "--env"], "--env needs a value"],
  [["list", "--env", "staging", "--persist-to", "d"], /cannot go with --env/],
  [["help", "list"], 'help takes no "list"'],
])("%j: %s", (argv, message) => {
  const error = usageError(argv as string[]);
  if (typeof message === "string") expect(error).toBe(message);
  else expect(error).toMatch(message);
});

it("list for people aligns one row per account, disabled ones with their time", () => {
  const table = formatAccountTable([
    {
      id: ID,
      displayName: "Acme storefront",
      createdAt: "2026-11-22T10:00:00.000Z",
      disabledAt: null,
      activeKeys: 3,
    },
    {
      id: "acct_zzzzzzzzzzzzzzzzzzzzzz",
      displayName: "Spam",
      createdAt: "2026-11-23T08:00:00.000Z",
      disabledAt: "2026-11-23T09:15:00.000Z",
      activeKeys: 0,
    },
  ]);
  expect(table).toMatchInlineSnapshot(`
    "id                           name             created               disabled              active keys
    ---------------------------  ---------------  --------------------  --------------------  -----------
    acct_Ab-_0123456789abcdefgh  Acme storefront  2026-11-22T10:00:00Z  -                     3
    acct_zzzzzzzzzzzzzzzzzzzzzz  Spam             2026-11-23T08:00:00Z  2026-11-23T09:15:00Z  0"
  `);
  expect(formatAccountTable([])).toBe("No accounts.");
});
