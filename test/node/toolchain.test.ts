// One wrangler, one miniflare, one workerd installed: the test plugin runs the very ones
// that `npm run dev`, the deploys and the benchmark run (package.json "overrides").
import { createRequire } from "node:module";
import path from "node:path";
import { expect, it } from "vitest";

const root = createRequire(import.meta.url);
const from = (dir: string) => createRequire(path.join(dir, "/"));
const plugin = from(
  path.join(path.dirname(root.resolve("vitest/package.json")), "..", "@cloudflare/vitest-plugin"),
);
const packageDir = (name: string) => path.dirname(root.resolve(`${name}/package.json`));

it.each(["wrangler", "miniflare"])("@cloudflare/vitest-plugin uses the project's %s", (name) => {
  expect(plugin.resolve(`${name}/package.json`)).toBe(root.resolve(`${name}/package.json`));
});

it("wrangler and miniflare run one workerd", () => {
  const workerd = (name: string) => from(packageDir(name)).resolve("workerd/package.json");
  expect(workerd("wrangler")).toBe(workerd("miniflare"));
});
