// One wrangler and one miniflare installed: the test plugin runs the very ones that
// `npm run dev` and the deploys run (package.json "overrides").
import { createRequire } from "node:module";
import path from "node:path";
import { expect, it } from "vitest";

const root = createRequire(import.meta.url);
const plugin = createRequire(
  path.join(path.dirname(root.resolve("vitest/package.json")), "..", "@cloudflare/vitest-plugin/"),
);

it.each(["wrangler", "miniflare"])("@cloudflare/vitest-plugin uses the project's %s", (name) => {
  expect(plugin.resolve(`${name}/package.json`)).toBe(root.resolve(`${name}/package.json`));
});
