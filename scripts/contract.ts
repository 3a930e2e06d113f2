// npm run contract [-- --port N]: the API tested from outside by tools nobody here wrote.
// Portman turns the served document (src/openapi/openapi.json) and its committed config
// (test/contract/portman-config.json: contract tests on every operation, variations for
// the documented error answers) into a Postman collection, and Newman runs it against
// `npm run dev` on 127.0.0.1 with a fresh local D1 in a temporary directory, so every
// run starts from the same empty database. Newman's table gives the counts; the exit
// code is Portman's (non-zero on any failed assertion). The collection it ran is left in
// dist/contract/collection.json, to import into Postman or rerun with `npx newman run`.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import waitOn from "wait-on";

const HOST = "127.0.0.1";
const { values } = parseArgs({ options: { port: { type: "string", default: "8830" } } });
const origin = `http://${HOST}:${values.port}`;
const root = fileURLToPath(new URL("..", import.meta.url));
const state = mkdtempSync(path.join(tmpdir(), "petstore-contract-"));
// Portman writes its intermediate files under ./tmp of where it runs: there, not here.
const work = mkdtempSync(path.join(tmpdir(), "petstore-portman-"));
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

// Its own process group, so that stopping it stops npm, node, wrangler and workerd.
const server = spawn(
  "npm",
  ["run", "-s", "dev", "--", "--ip", HOST, "--port", values.port, "--persist-to", state],
  { detached: true, env, stdio: ["ignore", "ignore", "inherit"] },
);

let status = 1;
try {
  await waitOn({ resources: [`http-get://${HOST}:${values.port}/`], timeout: 120_000 });
  status =
    spawnSync(
      "portman",
      [
        "--local",
        path.join(root, "src/openapi/openapi.json"),
        "--portmanConfigFile",
        path.join(root, "test/contract/portman-config.json"),
        "--baseUrl",
        `${origin}/v1`,
        "--output",
        path.join(root, "dist/contract/collection.json"),
        "--runNewman",
      ],
      { cwd: work, env, stdio: "inherit" },
    ).status ?? 1;
} finally {
  if (server.pid !== undefined) process.kill(-server.pid, "SIGTERM");
  // The database goes once the server has let go of it (its port is closed).
  await waitOn({ resources: [`tcp:${HOST}:${values.port}`], reverse: true, timeout: 30_000 });
  for (const dir of [state, work]) rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
