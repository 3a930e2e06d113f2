// npm run client:outside: the client package as a project outside this repository meets it.
// 1. Packs packages/client (its prepack builds it): JavaScript, declarations, README.
// 2. Installs the tarball and typescript alone into a project in a temporary folder, with
//    the machine's own Node and npm (not this repository's Node 24), and checks that no
//    server dependency came along.
// 3. Type-checks test/outside/program.ts there with --strict and runs it against a real
//    `npm run dev` (an API key with every scope, and a read-only one).
// 4. Generates types from the served document with openapi-typescript and
//    @hey-api/openapi-ts, as integrators do; fails on any warning they print and on a
//    --strict error in a two-line create with each.
// CLIENT_OUTSIDE_PORT (default 8796) is the dev server's port.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { LOCAL_DEV_KEY, startDevServer } from "../test/live/dev-server.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const PORT = Number(process.env.CLIENT_OUTSIDE_PORT ?? 8796);
/**
 * The generators integrators reach for, pinned so that a new release is a deliberate
 * change, each in a project of its own with a two-line create. Both drive TypeScript's
 * JavaScript API, which TypeScript 7 (npm's default) no longer has: with it both crash, so
 * each project asks for the newest TypeScript its generator runs with.
 */
const GENERATORS = [
  {
    name: "openapi-typescript",
    install: ["openapi-typescript@7.13.0", "openapi-fetch@0.17.0", "typescript@5"],
    generate: ["openapi-typescript", "openapi.json", "-o", "schema.d.ts"],
    create: [
      'import createClient from "openapi-fetch"; import type { paths } from "./schema.js";',
      'await createClient<paths>({ baseUrl: "http://127.0.0.1/v1" }).POST("/pets", { body: { name: "Rex", categoryId: 1 } });',
    ],
  },
  {
    name: "hey-api",
    install: ["@hey-api/openapi-ts@0.99.0", "typescript@6"],
    generate: ["openapi-ts", "-i", "openapi.json", "-o", "hey"],
    create: [
      'import { createPet } from "./hey/index.js";',
      'await createPet({ body: { name: "Rex", categoryId: 1 } });',
    ],
  },
];
/** Packages of the server side that the client must never bring into a project. */
const SERVER_PACKAGES = ["hono", "wrangler", "miniflare", "workerd", "zod"];

/**
 * The environment of a project outside the repository: no `npm run` variables, and a PATH
 * without node_modules/.bin folders, so `node` and `npm` are the machine's own.
 */
const outsideEnv: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => !dir.includes(`${path.sep}node_modules${path.sep}`))
    .join(path.delimiter),
};
for (const name of Object.keys(outsideEnv)) if (/^npm_/i.test(name)) delete outsideEnv[name];

/** Runs `command`, prints what it printed, and fails when it fails: its output and error. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  console.log(`$ ${command} ${args.join(" ")}`);
  const { env = outsideEnv, cwd } = options;
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8" });
  const printed = `${result.stdout ?? ""}${result.stderr ?? ""}`.trimEnd();
  if (printed) console.log(printed);
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")}: exit ${result.status}`);
  return { stdout: result.stdout, printed };
}

/** A project in a temporary folder: package.json, a strict tsconfig.json, `files`. */
function project(name: string, files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), `petstore-${name}-`));
  const compilerOptions = { strict: true, target: "es2022", module: "nodenext", outDir: "out" };
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name, private: true, type: "module" }),
  );
  writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions }));
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  return dir;
}

const failures: string[] = [];
const scratch: string[] = [];

// 1. The tarball.
const packDir = mkdtempSync(path.join(tmpdir(), "petstore-client-pack-"));
scratch.push(packDir);
const [packed] = JSON.parse(
  run("npm", ["pack", "-w", "@petstore/client", "--json", "--pack-destination", packDir], {
    cwd: ROOT,
    env: process.env,
  }).stdout,
) as Array<{ filename: string; size: number; files: Array<{ path: string }> }>;
if (!packed) throw new Error("npm pack made no tarball");
const tarball = path.join(packDir, packed.filename);
const packedFiles = packed.files.map((file) => file.path);
for (const file of ["dist/index.js", "dist/index.d.ts", "package.json", "README.md"]) {
  if (!packedFiles.includes(file)) failures.push(`the tarball lacks ${file}`);
}
console.log(`tarball: ${packed.size} bytes, ${packedFiles.length} files`);

// 2. A project outside the repository: the tarball and typescript.
const app = project("client-outside", {});
scratch.push(app);
copyFileSync(path.join(ROOT, "test/outside/program.ts"), path.join(app, "program.ts"));
const nodeVersion = run("node", ["--version"], { cwd: app }).stdout.trim();
const nodePath = run("sh", ["-c", "command -v node"], { cwd: app }).stdout.trim();
if (nodePath.startsWith(ROOT)) failures.push(`node is the repository's own: ${nodePath}`);
console.log(`the machine's Node: ${nodeVersion} (${nodePath})`);
run("npm", ["install", "--no-audit", "--no-fund", tarball, "typescript"], { cwd: app });
const lock = JSON.parse(readFileSync(path.join(app, "package-lock.json"), "utf8"));
const installed = Object.keys(lock.packages)
  .filter((at) => at && existsSync(path.join(app, at)))
  .map((at) => at.split("node_modules/").at(-1));
console.log(`installed: ${installed.join(", ")}`);
for (const name of SERVER_PACKAGES) {
  if (installed.includes(name)) failures.push(`the package brought ${name} into the project`);
}

// 3. The program: --strict, then against a real `npm run dev`.
run("npx", ["tsc", "-p", ".", "--strict"], { cwd: app });
const server = await startDevServer(PORT);
try {
  const keyOutput = await server.keys("create", "--label", "ci", "--scope", "pets:read");
  const readOnlyKey = keyOutput.trim().split("\n").at(-1) ?? "";
  run("node", ["out/program.js"], {
    cwd: app,
    env: {
      ...outsideEnv,
      PETSTORE_BASE_URL: `${server.base}/v1`,
      PETSTORE_API_KEY: LOCAL_DEV_KEY,
      PETSTORE_READ_ONLY_KEY: readOnlyKey,
    },
  });

  // 4. The generators integrators reach for, on the served document.
  const document = await (await fetch(`${server.base}/v1/openapi.json`)).text();
  // hey-api needs Node 22.18 or newer: the generators run on this repository's Node.
  const env = { ...outsideEnv, PATH: process.env.PATH };
  for (const generator of GENERATORS) {
    const dir = project(generator.name, {
      "openapi.json": document,
      "create.ts": generator.create.join("\n"),
    });
    scratch.push(dir);
    run("npm", ["install", "--no-audit", "--no-fund", ...generator.install], { cwd: dir, env });
    const [bin = "", ...args] = generator.generate;
    try {
      const { printed } = run(path.join("node_modules", ".bin", bin), args, { cwd: dir, env });
      if (/warn|⚠/i.test(printed)) failures.push(`${bin} printed a warning (above)`);
      run("npx", ["tsc", "-p", ".", "--strict", "--noEmit"], { cwd: dir, env });
    } catch (err) {
      failures.push(`${generator.name}: ${(err as Error).message} (its output is above)`);
    }
  }
} finally {
  await server.stop();
}

if (failures.length > 0) {
  console.error(`\nclient:outside FAILED (folders kept: ${scratch.join(", ")}):`);
  for (const failure of failures) console.error(`- ${failure}`);
  process.exit(1);
}
for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
console.log(`\nclient:outside passed: ${packed.filename}, ${packed.size} bytes packed`);
