// The layers of the API (src/) and of the platform (platform/src/), and what each worker and
// the client package may import from outside its own folder (docs/design.md, "Layers";
// docs/platform.md, "Modules"). Every file of both must belong to a layer.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

/** Each worker's layers: the files and folders (ending in /) each holds, the entry first. */
const LAYERS: Record<string, string[][]> = {
  "src/": [
    ["index.ts"],
    ["app.ts", "middleware.ts", "mcp.ts", "openapi/"],
    ["operations/"],
    ["auth/"],
    ["http/"],
    ["db/"],
    ["pets/"],
    [
      "errors.ts",
      "config.ts",
      "scopes.ts",
      "clock.ts",
      "log.ts",
      "encoding.ts",
      "mcp-contract.ts",
      "cache/",
    ],
  ],
  "platform/src/": [
    ["index.ts"],
    ["app.ts"],
    ["routes/"],
    ["pages/"],
    ["oauth/"],
    [
      "session.ts",
      "request.ts",
      "limits.ts",
      "ceremonies.ts",
      "new-key.ts",
      "responses.ts",
      "types.ts",
      "time.ts",
    ],
    ["webauthn.ts", "devices.ts", "recovery.ts"],
    ["db/"],
    ["config.ts", "errors.ts", "schemas.ts"],
  ],
};

/** The API's layers from the operations down, which the other workers may import. */
const belowApp = (target: string) =>
  target.startsWith("src/") && layerOf("src/", target.slice(4)) >= 2;

/** Each worker's source and the client's, and what each may import outside its own folder. */
const OUTSIDE: Record<string, (target: string) => boolean> = {
  // The API depends on no other worker: the MCP worker takes its contract from the API.
  "src/": (target) => target === "package.json",
  "platform/src/": belowApp,
  "mcp/src/": (target) => belowApp(target) || target === "package.json",
  // Its types are generated from the API's document, not imported: it is published alone.
  "packages/client/src/": () => false,
};

const ROOT = path.join(import.meta.dirname, "../..");

function filesOf(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .map((file) => `${folder}${file.split(path.sep).join("/")}`)
    .filter((file) => /\.(ts|js|json)$/.test(file));
}

const SOURCES = Object.keys(OUTSIDE).flatMap(filesOf);

/** The layer of `file` (a path inside `worker`'s folder), counted from the entry; -1 for none. */
function layerOf(worker: string, file: string): number {
  return (LAYERS[worker] ?? []).findIndex((members) =>
    members.some((m) => (m.endsWith("/") ? file.startsWith(m) : file === m)),
  );
}

/** The files `file` imports, from the repository's root (relative specifiers only). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const specifiers = text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g);
  return [...specifiers].map(([, specifier]) =>
    path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier as string)),
  );
}

/** Every import of a source that leaves its own folder, as `file -> target`. */
const OUTWARD = SOURCES.flatMap((file) => {
  const folder = Object.keys(OUTSIDE).find((f) => file.startsWith(f)) as string;
  return importsOf(file)
    .filter((target) => !target.startsWith(folder))
    .map((target) => ({ folder, file, target }));
});

for (const [worker, minimum] of [
  ["src/", 30],
  ["platform/src/", 40],
] as const) {
  const files = SOURCES.filter((file) => file.startsWith(worker));

  it(`places every file of ${worker} in one layer`, () => {
    expect(files.length).toBeGreaterThan(minimum);
    expect(files.filter((file) => layerOf(worker, file.slice(worker.length)) < 0)).toEqual([]);
  });

  it(`has no import in ${worker} from a lower layer to a higher one`, () => {
    const upward: string[] = [];
    let across = 0;
    for (const file of files) {
      const layer = layerOf(worker, file.slice(worker.length));
      for (const target of importsOf(file)) {
        if (!target.startsWith(worker)) continue;
        const to = layerOf(worker, target.slice(worker.length));
        if (to < layer) upward.push(`${file} -> ${target}`);
        if (to > layer) across++;
      }
    }
    expect(upward).toEqual([]);
    // The check saw the imports at all: most run across layers.
    expect(across).toBeGreaterThan(50);
  });
}

it("has no worker import from scripts/, bench/ or test/", () => {
  const tools = OUTWARD.filter(({ target }) => /^(scripts|bench|test)\//.test(target));
  expect(tools.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
});

it("imports from outside a worker's or the client's folder only what its rule allows", () => {
  const refused = OUTWARD.filter(({ folder, target }) => !OUTSIDE[folder]?.(target));
  expect(refused.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
  // The check saw the imports at all: the platform and the MCP worker use the API's layers.
  for (const folder of ["platform/src/", "mcp/src/"]) {
    expect(OUTWARD.filter((i) => i.folder === folder && belowApp(i.target)).length).toBeGreaterThan(
      0,
    );
  }
});
