// The grammar of the operator's commands (`npm run keys`, `npm run accounts`): a command word,
// then options and words read with node:util's parseArgs and checked against the command;
// `--env` or `--persist-to` name the database. Wrong input: one UsageError line, exit 2.
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import type { D1Target } from "./d1.ts";

export class UsageError extends Error {}

/** A word the person typed, quoted and cut short for a message. */
export const show = (text: string) =>
  JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** The options that name the database, which every command takes. */
export const WHERE_OPTIONS = {
  env: { type: "string" },
  "persist-to": { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/** Their names, for each command's list of the options it takes. */
export const WHERE = ["env", "persist-to"] as const satisfies ReadonlyArray<
  keyof typeof WHERE_OPTIONS
>;

/** How the usage of each command names the database. */
export const WHERE_USAGE = `  <where>     --env staging|production: that environment's remote database (through wrangler)
              --persist-to <dir>: the local database kept under <dir> (as wrangler's flag)
              neither: the local database that \`npm run dev\` uses`;

export interface Parsed<Option extends string> {
  command: string;
  /** Each option given, with its values in order (`"true"` for a flag). */
  values: Map<Option, string[]>;
  /** The other words, in order. */
  positionals: string[];
  /** The option's first value. */
  one(name: Option): string | undefined;
  /** The database `--env` or `--persist-to` name. */
  target: D1Target;
}

/**
 * `argv` read as one of `commands` (each with the options it takes) or `help` (also
 * `--help` or `-h` anywhere): "help", or the command with its words checked.
 */
export function parseCommand<Option extends string>(
  argv: readonly string[],
  commands: Record<string, readonly Option[]>,
  options: Record<Option, { type: "string" | "boolean"; multiple?: boolean }>,
): Parsed<Option> | "help" {
  const names = Object.keys(commands);
  const list = `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  if (argv.includes("--help") || argv.includes("-h")) return "help";
  const [command, ...rest] = argv;
  if (command === "help") {
    if (rest.length > 0) throw new UsageError(`help takes no ${show(rest[0] as string)}`);
    return "help";
  }
  if (command === undefined) throw new UsageError(`a command is needed: ${list}`);
  const allowed = commands[command];
  if (!Object.hasOwn(commands, command) || allowed === undefined) {
    throw new UsageError(`unknown command ${show(command)}: use ${names.join(", ")} or help`);
  }
  const values = new Map<Option, string[]>();
  const positionals: string[] = [];
  const { tokens } = parseArgs({
    args: rest,
    options,
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
    const option = options[name];
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
  const one = (name: Option) => values.get(name)?.[0];
  const where = (name: keyof typeof WHERE_OPTIONS) => values.get(name as Option)?.[0];
  const env = where("env");
  if (env !== undefined && env !== "staging" && env !== "production") {
    throw new UsageError(`--env must be staging or production, not ${show(env)}`);
  }
  const persistTo = where("persist-to");
  if (persistTo !== undefined && env !== undefined) {
    throw new UsageError("--persist-to names a local database; it cannot go with --env");
  }
  if (persistTo === "") throw new UsageError("--persist-to needs a directory");
  return { command, values, positionals, one, target: { env, persistTo } };
}

/**
 * The command line as `parse` reads it. Wrong input: `error: <the line>`, the usage, exit
 * 2; help: the usage, exit 0.
 */
export function commandLineOrExit<C extends { command: string }>(
  parse: () => C,
  usage: string,
): Exclude<C, { command: "help" }> {
  let parsed: C;
  try {
    parsed = parse();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n\n${usage}`);
    process.exit(2);
  }
  if (parsed.command === "help") {
    console.log(usage);
    process.exit(0);
  }
  return parsed as Exclude<C, { command: "help" }>;
}

/** Refuses any word but the options (for commands that take no id). */
export function noPositionals(parsed: Parsed<string>): void {
  const [first] = parsed.positionals;
  if (first !== undefined) throw new UsageError(`${parsed.command} takes no ${show(first)}`);
}

/**
 * The one word after the command, read by `parse`: `what.one` names it when there are
 * more, `what.missing` when there is none, `what.wrong` when `parse` refuses it.
 */
export function onePositional<T>(
  parsed: Parsed<string>,
  parse: (text: string | undefined) => T | undefined,
  what: { one: string; missing: string; wrong: (shown: string) => string },
): T {
  const [text, ...extra] = parsed.positionals;
  if (extra.length > 0) {
    throw new UsageError(
      `${parsed.command} takes one ${what.one}, not ${parsed.positionals.length} words`,
    );
  }
  const value = parse(text);
  if (value !== undefined) return value;
  throw new UsageError(
    text === undefined ? `${parsed.command} needs ${what.missing}` : what.wrong(show(text)),
  );
}

/** Rows for people: a header, a rule, one aligned line per item; `none` when there are none. */
export function formatTable<T>(
  columns: ReadonlyArray<readonly [string, (item: T) => string]>,
  items: readonly T[],
  none: string,
): string {
  if (items.length === 0) return none;
  const rows = [
    columns.map(([header]) => header),
    ...items.map((item) => columns.map(([, cell]) => cell(item))),
  ];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd();
  const [header, ...body] = rows.map(line);
  return [header, line(widths.map((w) => "-".repeat(w))), ...body].join("\n");
}

/** An ISO 8601 instant as the tables show it (UTC, whole seconds), or `none`. */
export const tableTime = (iso: string | null, none: string) =>
  iso ? `${iso.slice(0, 19)}Z` : none;
