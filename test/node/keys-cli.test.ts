// The grammar of `npm run keys -- ...` (scripts/keys.ts), run here in Node as the CLI
// runs it: every wrong flag or value is one UsageError line (the CLI prints it with the
// usage and exits 2; `npm run e2e` runs the real process), never a crash.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { OwnedKey } from "../../scripts/key-statements.ts";
import {
  formatKeyTable,
  keyTagSecret,
  parseDuration,
  parseKeyArgs,
  USAGE,
  UsageError,
} from "../../scripts/keys.ts";
import { LOCAL_KEY_TAG_SECRET } from "../../src/auth/keys.ts";
import { SCOPES } from "../../src/scopes.ts";
import { usageErrorOf } from "../support/usage-error.ts";

const importMetaEnv = (import.meta as { env?: Record<string, string | undefined> }).env;
const seed = Number(importMetaEnv?.VITE_FC_SEED ?? 20261122);

function usageError(argv: string[]): string {
  return usageErrorOf(() => parseKeyArgs(argv), UsageError, JSON.stringify(argv));
}

describe("valid commands", () => {
  const every = [...SCOPES];
  it.each([
    [
      "create --label web --scope pets:read --scope=orders:read --expires-in 30d --env staging",
      {
        label: "web",
        scopes: ["pets:read", "orders:read"],
        expiresInSeconds: 30 * 86_400,
        env: "staging",
      },
    ],
    // Without --scope every scope, no expiry; the local database by default.
    ["create --label=server", { label: "server", scopes: every, expiresInSeconds: null }],
    [
      "create --label x --persist-to=.wrangler/e2e",
      { label: "x", scopes: every, expiresInSeconds: null, persistTo: ".wrangler/e2e" },
    ],
    ["list", { json: false }],
    ["list --json --env production", { json: true, env: "production" }],
    ["list --persist-to /tmp/d1", { json: false, persistTo: "/tmp/d1" }],
    ["revoke 7", { id: 7 }],
    ["revoke 3 --persist-to=d", { id: 3, persistTo: "d" }],
    ["rotate 7", { id: 7, graceSeconds: 24 * 3600, expiresInSeconds: null }],
    ["rotate --grace 0s 12", { id: 12, graceSeconds: 0, expiresInSeconds: null }],
    [
      "rotate 3 --persist-to d",
      { id: 3, graceSeconds: 86_400, expiresInSeconds: null, persistTo: "d" },
    ],
  ])("%s", (args, fields) => {
    const argv = args.split(" ");
    // toEqual: a field the command has and the row does not name fails (undefined aside).
    expect(parseKeyArgs(argv)).toEqual({ command: argv[0], ...fields });
  });

  it("help, --help or -h anywhere asks for the usage, which names every command and flag", () => {
    for (const argv of [["help"], ["create", "--help"], ["-h"]]) {
      expect(parseKeyArgs(argv)).toEqual({ command: "help" });
    }
    expect(USAGE).toMatch(/npm run keys -- help/);
    expect(USAGE).toMatch(/create --label <label> \[--scope <scope>\]\.\.\. \[--expires-in/);
    expect(USAGE).toContain("--persist-to <dir>");
    for (const scope of SCOPES) expect(USAGE).toContain(scope);
  });
});

it("the key tag secret of create and rotate is API_KEY_TAG_SECRET, locally the public one; remotely one line says so", () => {
  expect(keyTagSecret(undefined, {})).toBe(LOCAL_KEY_TAG_SECRET);
  expect(keyTagSecret(undefined, { API_KEY_TAG_SECRET: "mine" })).toBe("mine");
  expect(keyTagSecret("production", { API_KEY_TAG_SECRET: "prod" })).toBe("prod");
  for (const environment of ["staging", "production"] as const) {
    expect(usageErrorOf(() => keyTagSecret(environment, {}), UsageError, environment)).toMatch(
      new RegExp(
        `needs API_KEY_TAG_SECRET .*wrangler secret put API_KEY_TAG_SECRET --env ${environment}`,
      ),
    );
  }
  expect(USAGE).toMatch(/API_KEY_TAG_SECRET/);
});

it.each([
  [[], /a command is needed/],
  [["frob"], /unknown command "frob": use create, list, rotate, revoke or help/],
  [["help", "create"], /help takes no "create"/],
  [["list", "--persist-to"], /--persist-to needs a value/],
  [["list", "--persist-to="], /--persist-to needs a directory/],
  [["list", "--persist-to", "d", "--env", "staging"], /cannot go with --env/],
  [["create"], /create needs --label/],
  [["create", "--label"], /--label needs a value/],
  [["create", "--label", "a", "--label", "b"], /--label is given twice/],
  [["create", "--label", "--scope", "pets:read"], /--label needs a value/],
  [["create", "--label", "é"], /printable ASCII/],
  [
    ["create", "--label", "x", "--scope", "pets:admin"],
    /--scope must be one of pets:read, pets:write, orders:read, not "pets:admin"/,
  ],
  [["create", "--label", "x", "--scope", "PETS:READ"], /--scope must be one of/],
  [
    ["create", "--label", "x", "--expires-in", "5"],
    /--expires-in must be a positive whole number followed by s, m, h or d/,
  ],
  [["create", "--label", "x", "--expires-in", "0s"], /--expires-in must be a positive/],
  [
    ["create", "--label", "x", "--expires-in", "-5s"],
    /--expires-in needs a value|--expires-in must be/,
  ],
  [["create", "--label", "x", "--grace", "1h"], /create does not take "--grace"/],
  [["create", "--label", "x", "extra"], /create takes no "extra"/],
  [["create", "--label", "x", "-s", "pets:read"], /create does not take "-s"/],
  [["list", "--json=yes"], /--json takes no value/],
  [["list", "--scope", "pets:read"], /list does not take "--scope"/],
  [["list", "--env", "prod"], /--env must be staging or production, not "prod"/],
  [["revoke"], /revoke needs the key's numeric id/],
  [["revoke", "abc"], /"abc" is not a key id/],
  [["revoke", "1", "2"], /revoke takes one key id/],
  [["rotate", "1 OR 1=1"], /is not a key id/],
  [["rotate", "3", "--grace", "24"], /--grace must be a whole number followed by s, m, h or d/],
])("wrong input %j is one clear line", (argv, message) => {
  expect(usageError(argv as string[])).toMatch(message);
});

it(`durations (fast-check, seed ${seed}): n followed by s, m, h or d is n seconds, minutes, hours or days; nothing else parses`, () => {
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 999_999_999 }),
      fc.constantFrom("s", "m", "h", "d"),
      (n, u) => {
        expect(parseDuration(`${n}${u}`)).toBe(n * unit[u as keyof typeof unit]);
      },
    ),
    { seed, numRuns: 300 },
  );
  fc.assert(
    fc.property(fc.string(), (text) => {
      if (!/^(0|[1-9][0-9]{0,8})[smhd]$/.test(text)) expect(parseDuration(text)).toBeUndefined();
    }),
    { seed, numRuns: 300 },
  );
});

it(`any order of create's flags gives the same command (fast-check, seed ${seed})`, () => {
  const parts = [
    ["--label", "web"],
    ["--scope", "pets:read"],
    ["--scope", "orders:read"],
    ["--expires-in", "1h"],
  ];
  fc.assert(
    fc.property(fc.shuffledSubarray(parts, { minLength: parts.length }), (shuffled) => {
      const result = parseKeyArgs(["create", ...shuffled.flat()]);
      expect(result).toMatchObject({ label: "web", expiresInSeconds: 3600 });
      expect(new Set((result as { scopes: string[] }).scopes)).toEqual(
        new Set(["pets:read", "orders:read"]),
      );
    }),
    { seed, numRuns: 50 },
  );
});

const key = (over: Partial<OwnedKey>): OwnedKey => ({
  id: 1,
  prefix: "psk_abcdef",
  label: "web",
  scopes: ["pets:read"],
  createdAt: "2026-11-22T10:00:00.000Z",
  expiresAt: null,
  lastUsedAt: null,
  revokedAt: null,
  account: "operator",
  ...over,
});

it("list for people aligns one row per key with every column, its account or the operator, and marks expired keys", () => {
  const now = new Date("2026-11-22T12:00:00Z");
  const table = formatKeyTable(
    [
      key({}),
      key({
        id: 12,
        label: "partner-acme",
        scopes: ["pets:read", "pets:write"],
        expiresAt: "2026-11-22T11:00:00.000Z",
        lastUsedAt: "2026-11-22T10:30:00.000Z",
        revokedAt: "2026-11-22T11:30:00.000Z",
        account: "acct_AAAAAAAAAAAAAAAAAAAAAA",
      }),
    ],
    now,
  );
  // Every column, aligned; expired keys marked.
  expect(table).toMatchInlineSnapshot(`
    "id  prefix       label         scopes                account                      created               expires                         last used             revoked
    --  -----------  ------------  --------------------  ---------------------------  --------------------  ------------------------------  --------------------  --------------------
    1   psk_abcdef…  web           pets:read             operator                     2026-11-22T10:00:00Z  never                           never                 -
    12  psk_abcdef…  partner-acme  pets:read pets:write  acct_AAAAAAAAAAAAAAAAAAAAAA  2026-11-22T10:00:00Z  2026-11-22T11:00:00Z (expired)  2026-11-22T10:30:00Z  2026-11-22T11:30:00Z"
  `);
  expect(formatKeyTable([], now)).toBe("No keys.");
});
