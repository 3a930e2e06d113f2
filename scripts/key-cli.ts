// What a person types after `npm run keys --`, parsed without Node APIs so the tests
// run this very parser in workerd (test/keys-cli.test.ts). Wrong input becomes one
// UsageError line; scripts/keys.ts prints it with the usage and exits 2.
import { tagSecrets } from "../src/auth/keys.ts";
import type { Scope } from "../src/auth/scopes.ts";
import { isScope, SCOPES } from "../src/auth/scopes.ts";
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

interface Target {
  /** Undefined: the local database. */
  env: "staging" | "production" | undefined;
  persistTo: string | undefined;
}

export type KeyCommand =
  | ({
      command: "create";
      label: string;
      scopes: Scope[];
      expiresInSeconds: number | null;
    } & Target)
  | ({ command: "list"; json: boolean } & Target)
  | ({
      command: "rotate";
      id: number;
      graceSeconds: number;
      expiresInSeconds: number | null;
    } & Target)
  | ({ command: "revoke"; id: number } & Target)
  | { command: "help" };

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** Seconds in `90s`, `15m`, `12h`, `30d`; undefined when `text` is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(0|[1-9][0-9]{0,8})([smhd])$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
}

/** The flags each command takes (value flags take the next word or `--flag=value`). */
const FLAGS = {
  create: ["label", "scope", "expires-in", "env", "persist-to"],
  list: ["json", "env", "persist-to"],
  rotate: ["grace", "expires-in", "env", "persist-to"],
  revoke: ["env", "persist-to"],
} as const;
type Command = keyof typeof FLAGS;
const BOOLEAN_FLAGS = new Set(["json", "help"]);
const REPEATABLE = new Set(["scope"]);

const show = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

export function parseKeyArgs(argv: readonly string[]): KeyCommand {
  if (argv.includes("--help") || argv.includes("-h")) return { command: "help" };
  const [command, ...rest] = argv;
  if (command === "help") {
    if (rest.length > 0) throw new UsageError(`help takes no ${show(rest[0] as string)}`);
    return { command: "help" };
  }
  if (command === undefined)
    throw new UsageError("a command is needed: create, list, rotate or revoke");
  if (!Object.hasOwn(FLAGS, command)) {
    throw new UsageError(
      `unknown command ${show(command)}: use create, list, rotate, revoke or help`,
    );
  }
  const allowed: readonly string[] = FLAGS[command as Command];
  const values = new Map<string, string[]>();
  const positionals: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (!word.startsWith("-") || word === "-") {
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    const name = (eq > 0 ? word.slice(0, eq) : word).replace(/^--?/, "");
    if (!word.startsWith("--") || !allowed.includes(name)) {
      throw new UsageError(`${command} does not take ${show(eq > 0 ? word.slice(0, eq) : word)}`);
    }
    let value: string;
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      value = "true";
    } else if (eq > 0) {
      value = word.slice(eq + 1);
    } else {
      const next = rest[i + 1];
      if (next === undefined || next.startsWith("--"))
        throw new UsageError(`--${name} needs a value`);
      value = next;
      i++;
    }
    const seen = values.get(name) ?? [];
    if (seen.length > 0 && !REPEATABLE.has(name)) throw new UsageError(`--${name} is given twice`);
    values.set(name, [...seen, value]);
  }
  const one = (name: string) => values.get(name)?.[0];

  const env = one("env");
  if (env !== undefined && env !== "staging" && env !== "production") {
    throw new UsageError(`--env must be staging or production, not ${show(env)}`);
  }
  const persistTo = one("persist-to");
  if (persistTo !== undefined && env !== undefined) {
    throw new UsageError("--persist-to names a local database; it cannot go with --env");
  }
  if (persistTo === "") throw new UsageError("--persist-to needs a directory");
  const target: Target = { env, persistTo };
  const duration = (name: string, allowZero: boolean): number | null => {
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

/** `list` for people: one aligned row per key, times in UTC without milliseconds. */
export function formatKeyTable(keys: readonly ListedKey[], now: Date): string {
  const time = (iso: string | null, none: string) => (iso ? `${iso.slice(0, 19)}Z` : none);
  const rows = keys.map((k) => [
    String(k.id),
    `${k.prefix}…`,
    k.label,
    k.scopes.join(" "),
    time(k.createdAt, "-"),
    k.expiresAt && Date.parse(k.expiresAt) <= now.getTime()
      ? `${time(k.expiresAt, "")} (expired)`
      : time(k.expiresAt, "never"),
    time(k.lastUsedAt, "never"),
    time(k.revokedAt, "-"),
  ]);
  const header = ["id", "prefix", "label", "scopes", "created", "expires", "last used", "revoked"];
  if (rows.length === 0) return "No keys.";
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] as string).length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
