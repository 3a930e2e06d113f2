// Runs SQL statements on the project's D1 as one batch and returns each one's rows: remotely
// with `wrangler d1 execute`, locally through a running `npm run dev`'s Local Explorer API
// (docs/design.md, "npm run dev": why not a second process) or `wrangler d1 execute --local`.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod/mini";
import { runWrangler } from "./wrangler.ts";

/** wrangler.toml's D1 binding. */
export const BINDING = "DB";

export interface D1Target {
  /** A remote environment; undefined: the local database. */
  env?: "staging" | "production" | undefined;
  /** The local database's directory (wrangler's --persist-to); undefined: wrangler's default. */
  persistTo?: string | undefined;
}

export type Row = Record<string, unknown>;

/** A statement the database refused, or a database that could not be reached. */
class D1Error extends Error {}

/** wrangler's flags for `target`. */
export function d1Flags({ env, persistTo }: D1Target): string[] {
  if (env) return ["--remote", "--env", env];
  return persistTo ? ["--local", "--persist-to", persistTo] : ["--local"];
}

/** Where a running `npm run dev` leaves its address: in the directory of the database it serves. */
const noteOf = (persistTo: string | undefined) =>
  path.resolve(persistTo ?? ".wrangler/state", "npm-run-dev.json");

const Note = z.object({ url: z.string(), pid: z.number() });

/** The address of the `npm run dev` serving the local database under `persistTo`, if one runs. */
function devServerOn(persistTo: string | undefined): string | undefined {
  try {
    const note = Note.parse(JSON.parse(readFileSync(noteOf(persistTo), "utf8")));
    process.kill(note.pid, 0); // throws once that process is gone
    return note.url;
  } catch {
    return undefined;
  }
}

/** Notes that this process serves the local database under `persistTo` at `url`, until it exits. */
export function noteDevServer(persistTo: string | undefined, url: string): void {
  const note = noteOf(persistTo);
  mkdirSync(path.dirname(note), { recursive: true });
  writeFileSync(note, JSON.stringify({ url, pid: process.pid }));
  process.on("exit", () => rmSync(note, { force: true }));
}

const EXPLORER = "/cdn-cgi/explorer/api/d1/database";
const ExplorerDatabases = z.object({
  result: z.array(z.object({ name: z.string(), uuid: z.string() })),
});
const ExplorerResponse = z.object({
  success: z.boolean(),
  errors: z.array(z.object({ message: z.string() })),
  result: z.nullable(
    z.array(
      z.object({
        results: z.object({ columns: z.array(z.string()), rows: z.array(z.array(z.unknown())) }),
      }),
    ),
  ),
});

/** The batch through the dev server at `url`; undefined when no Local Explorer responds there (yet). */
async function viaDevServer(url: string, statements: string[]): Promise<Row[][] | undefined> {
  const signal = AbortSignal.timeout(30_000);
  const explorer = async (path: string, init?: RequestInit) =>
    (await fetch(`${url}${EXPLORER}${path}`, { ...init, signal })).json();
  let databases: z.infer<typeof ExplorerDatabases>;
  try {
    databases = ExplorerDatabases.parse(await explorer(""));
  } catch {
    return undefined;
  }
  const database = databases.result.find((d) => d.name === BINDING);
  if (!database) throw new D1Error(`the dev server at ${url} has no D1 binding ${BINDING}`);
  const body = JSON.stringify({ batch: statements.map((sql) => ({ sql })) });
  const headers = { "Content-Type": "application/json" };
  const response = ExplorerResponse.parse(
    await explorer(`/${database.uuid}/raw`, { method: "POST", headers, body }),
  );
  if (!response.success || !response.result)
    throw new D1Error(response.errors.map((e) => e.message).join("; "));
  return response.result.map(({ results: { columns, rows } }) =>
    rows.map((row) => Object.fromEntries(columns.map((column, i) => [column, row[i]]))),
  );
}

const WranglerOutput = z.array(z.object({ results: z.array(z.record(z.string(), z.unknown())) }));
const WranglerFailure = z.object({ error: z.object({ text: z.string() }) });

/** What `wrangler d1 execute --json` says went wrong, when it says it as JSON. */
function failureText(stdout: string): string | undefined {
  try {
    return WranglerFailure.parse(JSON.parse(stdout)).error.text;
  } catch {
    return undefined;
  }
}

/** The batch through one `wrangler d1 execute` (which cannot bind parameters: see key-statements.ts). */
function viaWrangler(target: D1Target, statements: string[]): Row[][] {
  const command = ["d1", "execute", BINDING, ...d1Flags(target), "--json", "--command"];
  command.push(statements.join(";\n"));
  const { status, stdout, stderr } = runWrangler(command);
  if (status !== 0) {
    throw new D1Error(
      failureText(stdout) ?? `wrangler d1 execute failed (exit ${status})\n${stdout}${stderr}`,
    );
  }
  return WranglerOutput.parse(JSON.parse(stdout)).map((r) => r.results);
}

/**
 * For the operator's commands: `d1Execute`, or, when the database refuses or cannot be
 * reached, one line `error: ...` and exit code 1.
 */
export async function d1ExecuteOrExit(target: D1Target, statements: string[]): Promise<Row[][]> {
  try {
    return await d1Execute(target, statements);
  } catch (err) {
    if (!(err instanceof D1Error)) throw err;
    console.error(`error: ${err.message}`);
    process.exit(1);
  }
}

/** Runs `statements` on `target` as one batch; returns each statement's rows, in order. */
async function d1Execute(target: D1Target, statements: string[]): Promise<Row[][]> {
  const server = target.env ? undefined : devServerOn(target.persistTo);
  try {
    const responses =
      (server ? await viaDevServer(server, statements) : undefined) ??
      viaWrangler(target, statements);
    if (responses.length !== statements.length)
      throw new D1Error(`${responses.length} results for ${statements.length} statements`);
    return responses;
  } catch (err) {
    if (err instanceof D1Error && !target.env && /no such table/.test(err.message)) {
      const flags = target.persistTo ? ` --persist-to ${target.persistTo}` : "";
      throw new D1Error(
        `the local database has no tables yet (${err.message}): \`npm run dev${flags ? ` --${flags}` : ""}\` applies migrations/ first, or \`npx wrangler d1 migrations apply ${BINDING} --local${flags}\``,
      );
    }
    throw err;
  }
}
