// The grammar of the operator's commands (`npm run keys`, `npm run accounts`): a command word,
// then its options and words read by node:util's strict parseArgs, whose errors become one
// UsageError line (exit 2); `--env` or `--persist-to` name the database (scripts/d1.ts).
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import type { D1Target } from "./d1.ts";

export class UsageError extends Error {}

/** A word the person typed, quoted and cut short for a message. */
export const show = (text: string) =>
  JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** The options that name the database, which every command takes. */
export const WHERE = {
  env: { type: "string" },
  "persist-to": { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

export const WHERE_USAGE = `  <where>     --env staging|production: that environment's remote database (through wrangler)
              --persist-to <dir>: the local database kept under <dir> (as wrangler's flag)
              neither: the local database that \`npm run dev\` uses`;

type Values = Record<string, string | boolean | string[] | undefined>;

/**
 * `argv` as one of `commands` (each with the options it takes), or "help" (also `--help` or
 * `-h` anywhere): the command, its options, its words and the database it names.
 */
export function parseCommand<C extends string>(
  argv: readonly string[],
  commands: Record<C, ParseArgsOptionsConfig>,
): "help" | { command: C; values: Values; positionals: string[]; target: D1Target } {
  const names = Object.keys(commands);
  if (argv.includes("--help") || argv.includes("-h")) return "help";
  const [command, ...rest] = argv;
  if (command === "help") {
    if (rest[0] !== undefined) throw new UsageError(`help takes no ${show(rest[0])}`);
    return "help";
  }
  const list = `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  if (command === undefined) throw new UsageError(`a command is needed: ${list}`);
  if (!Object.hasOwn(commands, command))
    throw new UsageError(`unknown command ${show(command)}: use ${names.join(", ")} or help`);
  const options = commands[command as C];
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, tokens: true });
  } catch (err) {
    const { code, message } = err as { code?: string; message: string };
    const name = /'(-[^' ]*)/.exec(message)?.[1] ?? "";
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
      throw new UsageError(`${command} does not take ${show(name)}`);
    if (code !== "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") throw err;
    const what = message.includes("does not take") ? "takes no" : "needs a";
    throw new UsageError(`${name} ${what} value`);
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== "option" || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given twice`);
    seen.add(token.name);
  }
  const values = parsed.values as Values;
  const env = values.env as string | undefined;
  const persistTo = values["persist-to"] as string | undefined;
  if (env !== undefined && env !== "staging" && env !== "production")
    throw new UsageError(`--env must be staging or production, not ${show(env)}`);
  if (persistTo !== undefined && env !== undefined)
    throw new UsageError("--persist-to names a local database; it cannot go with --env");
  if (persistTo === "") throw new UsageError("--persist-to needs a directory");
  const target = { env, persistTo } as D1Target;
  return { command: command as C, values, positionals: parsed.positionals, target };
}

/** The one word after `command`, read by `parse`; a UsageError naming `what` otherwise. */
export function onePositional<T>(
  command: string,
  words: string[],
  parse: (text: string | undefined) => T | undefined,
  what: { one: string; missing: string; wrong: string },
): T {
  if (words.length > 1)
    throw new UsageError(`${command} takes one ${what.one}, not ${words.length} words`);
  const value = parse(words[0]);
  if (value !== undefined) return value;
  if (words[0] === undefined) throw new UsageError(`${command} needs ${what.missing}`);
  throw new UsageError(`${show(words[0])} is not ${what.wrong}`);
}

/** Refuses any word but the options (for commands that take no id). */
export function noPositionals(command: string, words: string[]): void {
  if (words[0] !== undefined) throw new UsageError(`${command} takes no ${show(words[0])}`);
}

/** Wrong input: `error: <the line>`, the usage, exit 2; help: the usage, exit 0. */
export function commandLineOrExit<C extends { command: string }>(
  parse: () => C,
  usage: string,
): Exclude<C, { command: "help" }> {
  try {
    const parsed = parse();
    if (parsed.command !== "help") return parsed as Exclude<C, { command: "help" }>;
    console.log(usage);
    process.exit(0);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n\n${usage}`);
    process.exit(2);
  }
}

/** Rows for people: a header, a rule, one aligned line per item; `none` when there are none. */
export function formatTable<T>(
  columns: [string, (item: T) => string][],
  items: readonly T[],
  none: string,
) {
  if (items.length === 0) return none;
  const rows = [columns.map(([header]) => header)];
  for (const item of items) rows.push(columns.map(([, cell]) => cell(item)));
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => (row[i] as string).length)));
  const rule = widths.map((w) => "-".repeat(w));
  rows.splice(1, 0, rule);
  const line = (row: string[]) => row.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  return rows.map((row) => line(row).trimEnd()).join("\n");
}

/** An ISO 8601 instant as the tables show it (UTC, whole seconds), or `none`. */
export const tableTime = (iso: string | null, none: string) =>
  iso ? `${iso.slice(0, 19)}Z` : none;
