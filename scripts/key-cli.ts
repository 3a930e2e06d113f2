// What a person types after `npm run keys --`, read with node:util's parseArgs
// (test/node/keys-cli.test.ts runs this very parser). Wrong input becomes one UsageError
// line; scripts/keys.ts prints it with the usage and exits 2. A new command is one entry
// in COMMANDS and one case in parseKeyArgs; a new column of `list`, one entry in COLUMNS.
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { tagSecrets } from "../src/auth/keys.ts";
import type { Scope } from "../src/scopes.ts";
import { isScope, SCOPES } from "../src/scopes.ts";
import type { D1Target } from "./d1.ts";
import type { ListedKey } from "./key-statements.ts";
import { parseKeyId } from "./key-statements.ts";

export const USAGE = `usage:
  npm run keys -- create --label <label> [--scope <scope>]... [--expires-in <duration>] [<where>]
  npm run keys -- list [--json] [<where>]
  npm run keys -- rotate <id> [--grace <duration>] [--expires-in <duration>] [<where>]
  npm run keys -- revoke <id> [<where>]
  npm run keys -- help            (also --help or -h)

  <scope>     ${SCOPES.join(", ")} (repeat --scope for several; none given: all three)
  <duration>  a whole number followed by s, m, h or d: 90s, 15m, 12h, 30d
              (--grace defaults to 24h and may be 0s: the old key expires at once)
  <where>     --env staging|production: that environment's remote database (through wrangler)
              --persist-to <dir>: the local database kept under <dir> (as wrangler's flag)
              neither: the local database that \`npm run dev\` uses

  create and rotate with --env need that environment's key tag secret in the environment
  variable API_KEY_TAG_SECRET (the value given to \`wrangler secret put API_KEY_TAG_SECRET\`).`;

export class UsageError extends Error {}

/**
 * The secret that tags the keys `create` and `rotate` issue for `env`, read as the worker
 * reads its own (`tagSecrets`): API_KEY_TAG_SECRET from the CLI's environment (the same
 * value as the worker's wrangler secret), or, for the local database, the public local
 * secret. Throws a UsageError for a remote environment without it.
 */
export function keyTagSecret(
  env: "staging" | "production" | undefined,
  processEnv: Record<string, string | undefined>,
): string {
  const [secret] = tagSecrets({ ...processEnv, ENVIRONMENT: env ?? "local" });
  if (secret !== undefined) return secret;
  throw new UsageError(
    `issuing a ${env} key needs API_KEY_TAG_SECRET set to ${env}'s key tag secret (the value given to \`wrangler secret put API_KEY_TAG_SECRET --env ${env}\`)`,
  );
}

export type KeyCommand =
  | ({
      command: "create";
      label: string;
      scopes: Scope[];
      expiresInSeconds: number | null;
    } & D1Target)
  | ({ command: "list"; json: boolean } & D1Target)
  | ({
      command: "rotate";
      id: number;
      graceSeconds: number;
      expiresInSeconds: number | null;
    } & D1Target)
  | ({ command: "revoke"; id: number } & D1Target)
  | { command: "help" };

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** Seconds in `90s`, `15m`, `12h`, `30d`; undefined when `text` is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(0|[1-9][0-9]{0,8})([smhd])$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
}

/** Every option of every command, as node:util's parseArgs reads them. */
const OPTIONS = {
  label: { type: "string" },
  scope: { type: "string", multiple: true },
  "expires-in": { type: "string" },
  grace: { type: "string" },
  json: { type: "boolean" },
  env: { type: "string" },
  "persist-to": { type: "string" },
} as const satisfies ParseArgsOptionsConfig;
type Option = keyof typeof OPTIONS;

const WHERE = ["env", "persist-to"] as const;
/** The options each command takes. */
const COMMANDS = {
  create: ["label", "scope", "expires-in", ...WHERE],
  list: ["json", ...WHERE],
  rotate: ["grace", "expires-in", ...WHERE],
  revoke: [...WHERE],
} as const satisfies Record<string, readonly Option[]>;
type Command = keyof typeof COMMANDS;

const show = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

/**
 * The options and the other words after `command`: parseArgs splits them (`--name value`,
 * `--name=value`); each is then checked against what `command` takes.
 */
function readOptions(command: Command, args: string[]) {
  const allowed: readonly Option[] = COMMANDS[command];
  const values = new Map<Option, string[]>();
  const positionals: string[] = [];
  const { tokens } = parseArgs({
    args,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const name = token.name as Option;
    if (!allowed.includes(name))
      throw new UsageError(`${command} does not take ${show(token.rawName)}`);
    const option: { type: string; multiple?: boolean } = OPTIONS[name];
    // A word starting with -- is the next option, not this one's value (--label --scope x).
    if (
      option.type === "string" &&
      (token.value === undefined || (!token.inlineValue && token.value.startsWith("--")))
    )
      throw new UsageError(`--${name} needs a value`);
    if (option.type === "boolean" && token.value !== undefined)
      throw new UsageError(`--${name} takes no value`);
    const seen = values.get(name) ?? [];
    if (seen.length > 0 && !option.multiple) throw new UsageError(`--${name} is given twice`);
    values.set(name, [...seen, token.value ?? "true"]);
  }
  return { values, positionals };
}

export function parseKeyArgs(argv: readonly string[]): KeyCommand {
  if (argv.includes("--help") || argv.includes("-h")) return { command: "help" };
  const [command, ...rest] = argv;
  if (command === "help") {
    if (rest.length > 0) throw new UsageError(`help takes no ${show(rest[0] as string)}`);
    return { command: "help" };
  }
  if (command === undefined)
    throw new UsageError("a command is needed: create, list, rotate or revoke");
  if (!Object.hasOwn(COMMANDS, command)) {
    throw new UsageError(
      `unknown command ${show(command)}: use create, list, rotate, revoke or help`,
    );
  }
  const { values, positionals } = readOptions(command as Command, rest);
  const one = (name: Option) => values.get(name)?.[0];

  const env = one("env");
  if (env !== undefined && env !== "staging" && env !== "production") {
    throw new UsageError(`--env must be staging or production, not ${show(env)}`);
  }
  const persistTo = one("persist-to");
  if (persistTo !== undefined && env !== undefined) {
    throw new UsageError("--persist-to names a local database; it cannot go with --env");
  }
  if (persistTo === "") throw new UsageError("--persist-to needs a directory");
  const target: D1Target = { env, persistTo };
  const duration = (name: Option, allowZero: boolean): number | null => {
    const text = one(name);
    if (text === undefined) return null;
    const seconds = parseDuration(text);
    if (seconds === undefined || (!allowZero && seconds === 0)) {
      throw new UsageError(
        `--${name} must be a ${allowZero ? "" : "positive "}whole number followed by s, m, h or d (e.g. 30d), not ${show(text)}`,
      );
    }
    return seconds;
  };
  const id = (): number => {
    const [text, ...extra] = positionals;
    if (extra.length > 0)
      throw new UsageError(`${command} takes one key id, not ${positionals.length} words`);
    const parsed = parseKeyId(text);
    if (parsed === undefined) {
      throw new UsageError(
        text === undefined
          ? `${command} needs the key's numeric id (see \`npm run keys -- list\`)`
          : `${show(text)} is not a key id: ids are positive whole numbers (see \`npm run keys -- list\`)`,
      );
    }
    return parsed;
  };
  const noPositionals = () => {
    if (positionals.length > 0)
      throw new UsageError(`${command} takes no ${show(positionals[0] as string)}`);
  };

  switch (command as Command) {
    case "create": {
      noPositionals();
      const label = one("label");
      if (label === undefined)
        throw new UsageError("create needs --label <label> (who or what the key is for)");
      if (!/^[\x20-\x7E]{1,100}$/.test(label)) {
        throw new UsageError("--label must be 1 to 100 printable ASCII characters");
      }
      const scopes: Scope[] = [];
      for (const scope of values.get("scope") ?? []) {
        if (!isScope(scope)) {
          throw new UsageError(`--scope must be one of ${SCOPES.join(", ")}, not ${show(scope)}`);
        }
        if (!scopes.includes(scope)) scopes.push(scope);
      }
      return {
        command: "create",
        label,
        scopes: scopes.length > 0 ? scopes : [...SCOPES],
        expiresInSeconds: duration("expires-in", false),
        ...target,
      };
    }
    case "list":
      noPositionals();
      return { command: "list", json: one("json") === "true", ...target };
    case "rotate":
      return {
        command: "rotate",
        id: id(),
        graceSeconds: duration("grace", true) ?? 24 * 3600,
        expiresInSeconds: duration("expires-in", false),
        ...target,
      };
    case "revoke":
      return { command: "revoke", id: id(), ...target };
  }
}

const time = (iso: string | null, none: string) => (iso ? `${iso.slice(0, 19)}Z` : none);

/** The columns of `list` for people: a header and how a key fills it. */
const COLUMNS: ReadonlyArray<[string, (key: ListedKey, now: Date) => string]> = [
  ["id", (k) => String(k.id)],
  ["prefix", (k) => `${k.prefix}…`],
  ["label", (k) => k.label],
  ["scopes", (k) => k.scopes.join(" ")],
  ["created", (k) => time(k.createdAt, "-")],
  [
    "expires",
    (k, now) =>
      k.expiresAt && Date.parse(k.expiresAt) <= now.getTime()
        ? `${time(k.expiresAt, "")} (expired)`
        : time(k.expiresAt, "never"),
  ],
  ["last used", (k) => time(k.lastUsedAt, "never")],
  ["revoked", (k) => time(k.revokedAt, "-")],
];

/** `list` for people: one aligned row per key, times in UTC without milliseconds. */
export function formatKeyTable(keys: readonly ListedKey[], now: Date): string {
  if (keys.length === 0) return "No keys.";
  const rows = [
    COLUMNS.map(([header]) => header),
    ...keys.map((key) => COLUMNS.map(([, cell]) => cell(key, now))),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd();
  const [header, ...body] = rows.map(line);
  return [header, line(widths.map((w) => "-".repeat(w))), ...body].join("\n");
}
