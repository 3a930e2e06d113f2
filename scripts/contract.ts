// npm run contract [-- --port N]: the API tested from outside by tools nobody here wrote.
// Portman turns the served document (src/openapi/openapi.json) and its committed config
// (test/contract/portman-config.json: contract tests on every operation, variations for
// the documented error answers) into a Postman collection, and Newman runs it against
// `npm run dev` on 127.0.0.1 with a fresh local D1 in a temporary directory, so every
// run starts from the same database (local-dev-key and the demo pets). Newman's table
// gives the counts; the exit code is Portman's (non-zero on any failed assertion). The
// collection it ran is left in dist/contract/collection.json, to import into Postman or
// rerun with `npx newman run`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { scriptEnv, startDevServer } from "../test/live/dev-server.ts";

const { values } = parseArgs({ options: { port: { type: "string", default: "8830" } } });
const root = fileURLToPath(new URL("..", import.meta.url));
const server = await startDevServer(Number(values.port));
// Portman writes its intermediate files under ./tmp of where it runs: there, not here.
const work = mkdtempSync(path.join(tmpdir(), "petstore-portman-"));
let status = 1;
try {
  const args = [
    ["--local", path.join(root, "src/openapi/openapi.json")],
    ["--portmanConfigFile", path.join(root, "test/contract/portman-config.json")],
    ["--baseUrl", `${server.base}/v1`],
    ["--output", path.join(root, "dist/contract/collection.json")],
  ];
  // Not spawnSync: this process must keep reading the dev server's output meanwhile.
  const portman = spawn(
    path.join(root, "node_modules/.bin/portman"),
    [...args.flat(), "--runNewman"],
    {
      cwd: work,
      env: scriptEnv,
      stdio: "inherit",
    },
  );
  const [code] = (await once(portman, "exit")) as [number | null];
  status = code ?? 1;
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exit(status);
