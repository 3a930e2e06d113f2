// What a person types after `npm run keys --`, read with the operator commands' grammar
// (scripts/operator-cli.ts): a command is one entry in COMMANDS and one case in parseKeyArgs,
// a column of `list` one entry in COLUMNS.
import { tagSecrets } from "../src/auth/keys.ts";
import { parseKeyId } from "../src/db/listed-keys.ts";
import type { Scope } from "../src/scopes.ts";
import { isScope, SCOPES } from "../src/scopes.ts";
import type { D1Target } from "./d1.ts";
import type { OwnedKey } from "./key-statements.ts";
import {
  formatTable,
  noPositionals,
  onePositional,
  parseCommand,
  show,
  tableTime,
  UsageError,
  WHERE,
  WHERE_OPTIONS,
  WHERE_USAGE,
} from "./operator-cli.ts";

export { UsageError };

export const USAGE = `usage:
  npm run keys -- create --label <label> [--scope <scope>]... [--expires-in <duration>] [<where>]
  npm run keys -- list [--json] [<where>]
  npm run keys -- rotate <id> [--grace <duration>] [--expires-in <duration>] [<where>]
  npm run keys -- revoke <id> [<where>]
  npm run keys -- help            (also --help or -h)

  <scope>     ${SCOPES.join(", ")} (repeat --scope for several; none given: all three)
  <duration>  a whole number followed by s, m, h or d: 90s, 15m, 12h, 30d
              (--grace defaults to 24h and may be 0s: the old key expires at once)
${WHERE_USAGE}

  list shows each key's account on the developer platform, or "operator" for a key
  issued here. create and rotate with --env need that environment's key tag secret in
  the environment variable API_KEY_TAG_SECRET (the value given to
  \`wrangler secret put API_KEY_TAG_SECRET\`).`;

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

/** Every option of every command. */
const OPTIONS = {
  label: { type: "string" },
  scope: { type: "string", multiple: true },
  "expires-in": { type: "string" },
  grace: { type: "string" },
  json: { type: "boolean" },
  ...WHERE_OPTIONS,
} as const;
type Option = keyof typeof OPTIONS;

/** The options each command takes. */
const COMMANDS = {
  create: ["label", "scope", "expires-in", ...WHERE],
  list: ["json", ...WHERE],
  rotate: ["grace", "expires-in", ...WHERE],
  revoke: [...WHERE],
} as const satisfies Record<string, readonly Option[]>;
type Command = keyof typeof COMMANDS;

export function parseKeyArgs(argv: readonly string[]): KeyCommand {
  const parsed = parseCommand<Option>(argv, COMMANDS, OPTIONS);
  if (parsed === "help") return { command: "help" };
  const { values, one, target } = parsed;
  const command = parsed.command as Command;
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
  const id = () =>
    onePositional(parsed, parseKeyId, {
      one: "key id",
      missing: "the key's numeric id (see `npm run keys -- list`)",
      wrong: (text) =>
        `${text} is not a key id: ids are positive whole numbers (see \`npm run keys -- list\`)`,
    });

  switch (command) {
    case "create": {
      noPositionals(parsed);
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
      noPositionals(parsed);
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

/** The columns of `list` for people: a header and how a key fills it at `now`. */
const COLUMNS: ReadonlyArray<[string, (key: OwnedKey, now: Date) => string]> = [
  ["id", (k) => String(k.id)],
  ["prefix", (k) => `${k.prefix}…`],
  ["label", (k) => k.label],
  ["scopes", (k) => k.scopes.join(" ")],
  ["account", (k) => k.account],
  ["created", (k) => tableTime(k.createdAt, "-")],
  [
    "expires",
    (k, now) =>
      k.expiresAt && Date.parse(k.expiresAt) <= now.getTime()
        ? `${tableTime(k.expiresAt, "")} (expired)`
        : tableTime(k.expiresAt, "never"),
  ],
  ["last used", (k) => tableTime(k.lastUsedAt, "never")],
  ["revoked", (k) => tableTime(k.revokedAt, "-")],
];

/** `list` for people: one aligned row per key, times in UTC without milliseconds. */
export function formatKeyTable(keys: readonly OwnedKey[], now: Date): string {
  const columns = COLUMNS.map(([header, cell]) => [header, (k: OwnedKey) => cell(k, now)] as const);
  return formatTable(columns, keys, "No keys.");
}
