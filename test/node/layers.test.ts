// The layers of src/ (docs/design.md, "Layers"), from the entry down: a file imports only
// from its own layer and the layers below it. Every file of src/ must belong to a layer.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

/** Each layer: the files and folders (ending in /) of src/ it holds, the entry first. */
const LAYERS = [
  ["index.ts"],
  ["app.ts", "stages.ts", "mcp.ts", "openapi/"],
  ["operations/"],
  ["auth/"],
  ["http/"],
  ["db/"],
  ["pets/"],
  ["errors.ts", "config.ts", "scopes.ts", "clock.ts", "log.ts", "encoding.ts", "cache/"],
];

const SRC = path.join(import.meta.dirname, "../../src");
const FILES = readdirSync(SRC, { recursive: true, encoding: "utf8" })
  .map((file) => file.split(path.sep).join("/"))
  .filter((file) => /\.(ts|js|json)$/.test(file));

function layerOf(file: string): number {
  return LAYERS.findIndex((members) =>
    members.some((m) => (m.endsWith("/") ? file.startsWith(m) : file === m)),
  );
}

/** The files of src/ that `file` imports (relative specifiers only; packages are not layers). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(SRC, file), "utf8");
  const specifiers = text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g);
  return [...specifiers]
    .map(([, specifier]) =>
      path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier as string)),
    )
    .filter((target) => !target.startsWith("../"));
}

it("places every file of src/ in one layer", () => {
  expect(FILES.length).toBeGreaterThan(30);
  expect(FILES.filter((file) => layerOf(file) < 0)).toEqual([]);
});

it("has no import from a lower layer to a higher one", () => {
  const upward: string[] = [];
  let across = 0;
  for (const file of FILES) {
    for (const target of importsOf(file)) {
      if (layerOf(target) < layerOf(file)) upward.push(`${file} -> ${target}`);
      if (layerOf(target) > layerOf(file)) across++;
    }
  }
  expect(upward).toEqual([]);
  // The check saw the imports at all: most run across layers.
  expect(across).toBeGreaterThan(50);
});
