// npm run contract [-- --port N]: Portman turns the served document and
// test/contract/portman-config.json into a collection that Newman runs against `npm run dev`
// on a fresh local D1; the collection stays in dist/contract/collection.json.
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
