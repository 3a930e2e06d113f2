// npm run keys -- create|list|rotate|revoke ... [<where>]: one batch per command (scripts/d1.ts);
// a new key is printed once, alone on the last line. docs/keys.md, "Managing keys".
import { displayPrefix, hashApiKey, issueApiKey, tagSecrets } from "../src/auth/keys.ts";
import { AUTH_CACHE_TTL_MS } from "../src/config.ts";
import { type ListedKey, parseKeyId, toListedKey } from "../src/db/listed-keys.ts";
import { isScope, SCOPES, type Scope } from "../src/scopes.ts";
import { type D1Target, d1ExecuteOrExit, type Row } from "./d1.ts";
import type { OwnedKey } from "./key-statements.ts";
import * as sql from "./key-statements.ts";
import * as cli from "./operator-cli.ts";

export const { UsageError } = cli;
const { show, WHERE } = cli;

export const USAGE = `usage:
  npm run keys -- create --label <label> [--scope <scope>]... [--expires-in <duration>] [<where>]
  npm run keys -- list [--json] [<where>]
  npm run keys -- rotate <id> [--grace <duration>] [--expires-in <duration>] [<where>]
  npm run keys -- revoke <id> [<where>]
  npm run keys -- help            (also --help or -h)

  <scope>     ${SCOPES.join(", ")} (repeat --scope for several; none given: all three)
  <duration>  a whole number followed by s, m, h or d: 90s, 15m, 12h, 30d
              (--grace defaults to 24h and may be 0s: the old key expires at once)
${cli.WHERE_USAGE}

  list shows each key's account on the developer platform, or "operator" for a key
  issued here. create and rotate with --env need that environment's key tag secret in
  the environment variable API_KEY_TAG_SECRET (the value given to
  \`wrangler secret put API_KEY_TAG_SECRET\`).`;

/**
 * The secret that tags the keys `create` and `rotate` issue for `env`, read as the worker reads
 * its own (`tagSecrets`); a UsageError for a remote environment without API_KEY_TAG_SECRET.
 */
export function keyTagSecret(env: D1Target["env"], processEnv: Record<string, string | undefined>) {
  const [secret] = tagSecrets({ ...processEnv, ENVIRONMENT: env ?? "local" });
  if (secret !== undefined) return secret;
  throw new UsageError(
    `issuing a ${env} key needs API_KEY_TAG_SECRET set to ${env}'s key tag secret (the value given to \`wrangler secret put API_KEY_TAG_SECRET --env ${env}\`)`,
  );
}

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** Seconds in `90s`, `15m`, `12h`, `30d`; undefined when `text` is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(0|[1-9][0-9]{0,8})([smhd])$/.exec(text);
  return match ? Number(match[1]) * UNITS[match[2] as keyof typeof UNITS] : undefined;
}

const expiresIn = { "expires-in": { type: "string" } } as const;
const COMMANDS = {
  create: {
    label: { type: "string" },
    scope: { type: "string", multiple: true },
    ...expiresIn,
    ...WHERE,
  },
  list: { json: { type: "boolean" }, ...WHERE },
  rotate: { grace: { type: "string" }, ...expiresIn, ...WHERE },
  revoke: WHERE,
} as const;

export function parseKeyArgs(argv: readonly string[]) {
  const parsed = cli.parseCommand(argv, COMMANDS);
  if (parsed === "help") return { command: parsed };
  const { command, values, positionals, target } = parsed;
  const duration = (name: string, allowZero: boolean): number | null => {
    const text = values[name] as string | undefined;
    if (text === undefined) return null;
    const seconds = parseDuration(text);
    if (seconds !== undefined && (allowZero || seconds > 0)) return seconds;
    throw new UsageError(
      `--${name} must be a ${allowZero ? "" : "positive "}whole number followed by s, m, h or d (e.g. 30d), not ${show(text)}`,
    );
  };
  const id = () =>
    cli.onePositional(command, positionals, parseKeyId, {
      one: "key id",
      missing: "the key's numeric id (see `npm run keys -- list`)",
      wrong: "a key id: ids are positive whole numbers (see `npm run keys -- list`)",
    });
  const expiresInSeconds = () => duration("expires-in", false);
  switch (command) {
    case "create": {
      cli.noPositionals(command, positionals);
      const label = values.label as string | undefined;
      if (label === undefined)
        throw new UsageError("create needs --label <label> (who or what the key is for)");
      if (!/^[\x20-\x7E]{1,100}$/.test(label))
        throw new UsageError("--label must be 1 to 100 printable ASCII characters");
      const scopes = [...new Set((values.scope as string[] | undefined) ?? SCOPES)];
      const wrong = scopes.find((scope) => !isScope(scope));
      if (wrong !== undefined)
        throw new UsageError(`--scope must be one of ${SCOPES.join(", ")}, not ${show(wrong)}`);
      return {
        command,
        label,
        scopes: scopes as Scope[],
        expiresInSeconds: expiresInSeconds(),
        ...target,
      };
    }
    case "list":
      cli.noPositionals(command, positionals);
      return { command, json: values.json === true, ...target };
    case "rotate": {
      const graceSeconds = duration("grace", true) ?? 24 * 3600;
      return { command, id: id(), graceSeconds, expiresInSeconds: expiresInSeconds(), ...target };
    }
    case "revoke":
      return { command, id: id(), ...target };
  }
}

/** `list` for people: one aligned row per key at `now`, times in UTC without milliseconds. */
export function formatKeyTable(keys: readonly OwnedKey[], now: Date): string {
  const time = cli.tableTime;
  const expired = (k: OwnedKey) => k.expiresAt && Date.parse(k.expiresAt) <= now.getTime();
  return cli.formatTable<OwnedKey>(
    [
      ["id", (k) => String(k.id)],
      ["prefix", (k) => `${k.prefix}…`],
      ["label", (k) => k.label],
      ["scopes", (k) => k.scopes.join(" ")],
      ["account", (k) => k.account],
      ["created", (k) => time(k.createdAt, "-")],
      [
        "expires",
        (k) => (expired(k) ? `${time(k.expiresAt, "")} (expired)` : time(k.expiresAt, "never")),
      ],
      ["last used", (k) => time(k.lastUsedAt, "never")],
      ["revoked", (k) => time(k.revokedAt, "-")],
    ],
    keys,
    "No keys.",
  );
}

async function main() {
  let secret = "";
  const args = cli.commandLineOrExit(() => {
    const command = parseKeyArgs(process.argv.slice(2));
    const issues = command.command === "create" || command.command === "rotate";
    if (issues) secret = keyTagSecret(command.env, process.env);
    return command;
  }, USAGE);
  const where = args.env ? `${args.env} (remote)` : "local";
  const execute = (...statements: string[]) => d1ExecuteOrExit(args, statements);
  const fail: (message: string) => never = (message) => {
    console.error(`error: ${message}`);
    process.exit(1);
  };
  const rowsOf = (rows: Row[] | undefined) => (rows ?? []).map(toListedKey);
  const describeKey = (k: ListedKey) =>
    `id ${k.id} ("${k.label}", ${k.scopes.join(" ")}, ${k.expiresAt ? `expires ${k.expiresAt}` : "never expires"})`;
  /** A new key for the target environment, with its hash and prefix (create, rotate). */
  const issue = async () => {
    const key = await issueApiKey(secret);
    return { key, keyHash: await hashApiKey(key), prefix: displayPrefix(key) };
  };

  if (args.command === "create") {
    const { key, ...stored } = await issue();
    // expiresInSeconds: counted by the database from the moment it stores the key.
    const [created] = rowsOf((await execute(sql.createKeyStatement({ ...stored, ...args })))[0]);
    if (!created) fail(`the key was not stored in ${where}`);
    console.log(`Created key ${describeKey(created)} in ${where}. It is shown only once:`);
    console.log(key);
  } else if (args.command === "list") {
    const keys = ((await execute(sql.LIST_KEYS_STATEMENT))[0] ?? []).map(sql.toOwnedKey);
    console.log(args.json ? JSON.stringify(keys, null, 2) : formatKeyTable(keys, new Date()));
  } else if (args.command === "rotate") {
    const { key, ...stored } = await issue();
    const [inserted, expired] = await execute(
      ...sql.rotateKeyStatements({ oldId: args.id, ...stored, ...args }),
    );
    const [created] = rowsOf(inserted);
    const [old] = rowsOf(expired);
    if (!created || !old)
      fail(`no active key with id ${args.id} in ${where} (see \`npm run keys -- list\`)`);
    console.log(`Rotated key id ${old.id} in ${where}: it stops working at ${old.expiresAt}.`);
    console.log(`New key ${describeKey(created)}. It is shown only once:`);
    console.log(key);
  } else {
    const [revoked] = await execute(sql.revokeKeyStatement(args.id, Math.floor(Date.now() / 1000)));
    if (!revoked?.length) fail(`no active key with id ${args.id} in ${where}`);
    console.log(
      `Revoked key id ${args.id} in ${where}; it is refused everywhere within ${AUTH_CACHE_TTL_MS / 1000} seconds of the D1 read replicas having the change (docs/keys.md, "Revocation bound").`,
    );
  }
}

if (import.meta.main) await main();
