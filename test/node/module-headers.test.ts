// Every module of the workers opens with a header of one to three comment lines that says
// what it is; the reasons live in docs/design.md and the docs it links.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const ROOT = path.join(import.meta.dirname, "../..");

it("opens every module of src/, platform/src/ and mcp/src/ with a header of 1 to 3 lines", () => {
  const modules = ["src/", "platform/src/", "mcp/src/"].flatMap((folder) =>
    readdirSync(path.join(ROOT, folder), { recursive: true, encoding: "utf8" })
      .filter((file) => /\.(ts|js)$/.test(file))
      .map((file) => `${folder}${file.split(path.sep).join("/")}`),
  );
  expect(modules.length).toBeGreaterThan(60);
  const headers = modules.map((file) => {
    const lines = readFileSync(path.join(ROOT, file), "utf8").split("\n");
    const length = lines.findIndex((line) => !line.startsWith("//"));
    return { file, length };
  });
  expect(headers.filter(({ length }) => length < 1 || length > 3)).toEqual([]);
});
