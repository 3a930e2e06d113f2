// npm run client:outside: the client's tarball as a fresh clone's `npm pack` makes it, in a project
// outside the repository (publint, arethetypeswrong, TypeScript 5.4 and the newest, Node 20 and 24),
// its program against `npm run dev` and a fault proxy; two generators. CLIENT_OUTSIDE_PORT.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { LOCAL_DEV_KEY, startDevServer } from "../test/live/dev-server.ts";
import { startFaultProxy } from "../test/outside/fault-proxy.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const PORT = Number(process.env.CLIENT_OUTSIDE_PORT ?? 8796);
/** The oldest TypeScript the package supports, as its README states (older: openapi-fetch's types fail). */
const MIN_TYPESCRIPT = "5.4";
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
    create:
      'import createClient from "openapi-fetch"; import type { paths } from "./schema.js";\nawait createClient<paths>({ baseUrl: "http://127.0.0.1/v1" }).POST("/pets", { body: { name: "Rex", categoryId: 1 } });',
  },
  {
    name: "hey-api",
    install: ["@hey-api/openapi-ts@0.99.0", "typescript@6"],
    generate: ["openapi-ts", "-i", "openapi.json", "-o", "hey"],
    create:
      'import { createPet } from "./hey/index.js";\nawait createPet({ body: { name: "Rex", categoryId: 1 } });',
  },
];
/** The most the package adds to a browser app, with openapi-fetch, minified and gzipped. */
const BUNDLE_BUDGET_KB = 7;
/** The package's linters, pinned like the generators: exports and files, types per resolution. */
const LINTERS = ["publint@0.3.25", "@arethetypeswrong/cli@0.18.5"];
/** Packages of the server side that the client must never bring into a project. */
const SERVER_PACKAGES = ["hono", "wrangler", "miniflare", "workerd", "zod"];
/** What the tarball must hold: both module systems, the licence, nothing of the build. */
const PACKED_FILES =
  "LICENSE README.md package.json dist/index.js dist/index.d.ts dist/cjs/index.js dist/cjs/index.d.ts dist/cjs/package.json";

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

type RunOptions = { cwd: string; env?: NodeJS.ProcessEnv };

/** Runs `command`, prints what it printed, and fails when it fails: its output and error. */
function run(command: string, args: string[], { cwd, env = outsideEnv }: RunOptions) {
  console.log(`$ ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8" });
  const printed = `${result.stdout ?? ""}${result.stderr ?? ""}`.trimEnd();
  if (printed) console.log(printed);
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")}: exit ${result.status}`);
  return { stdout: result.stdout, printed };
}

/** `run` without blocking this process (the fault proxy runs in it), output as it comes. */
async function runAsync(command: string, args: string[], { cwd, env = outsideEnv }: RunOptions) {
  console.log(`$ ${command} ${args.join(" ")}`);
  const child = spawn(command, args, { cwd, env, stdio: "inherit" });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`${command} ${args.join(" ")}: exit ${code}`);
}

const readJson = (...at: string[]) => JSON.parse(fs.readFileSync(path.join(...at), "utf8"));
const NO_NOISE = ["--no-audit", "--no-fund"];

/** A project in a temporary folder: package.json, a strict tsconfig.json (and `tsconfig`), `files`. */
function project(name: string, files: Record<string, string>, tsconfig = {}): string {
  const dir = fs.mkdtempSync(path.join(tmpdir(), `petstore-${name}-`));
  const compilerOptions = { strict: true, target: "es2022", module: "nodenext", outDir: "out" };
  const write = (file: string, json: object) =>
    fs.writeFileSync(path.join(dir, file), JSON.stringify(json));
  write("package.json", { name, private: true, type: "module" });
  write("tsconfig.json", { compilerOptions, ...tsconfig });
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  return dir;
}

const failures: string[] = [];
const scratch: string[] = [];
const check = (ok: boolean, failure: string) => {
  if (!ok) failures.push(failure);
};

// 1. The tarball as a fresh clone packs it (no dist/: its prepack builds it), what it
// holds, its metadata, publint and arethetypeswrong on it.
fs.rmSync(path.join(ROOT, "packages/client/dist"), { recursive: true, force: true });
const packDir = fs.mkdtempSync(path.join(tmpdir(), "petstore-client-pack-"));
scratch.push(packDir);
const pack = ["pack", "-w", "@petstore/client", "--json", "--pack-destination", packDir];
const [packed] = JSON.parse(run("npm", pack, { cwd: ROOT, env: process.env }).stdout) as Array<{
  filename: string;
  size: number;
  files: Array<{ path: string }>;
}>;
if (!packed) throw new Error("npm pack made no tarball");
const tarball = path.join(packDir, packed.filename);
const packedFiles = packed.files.map((file) => file.path);
for (const file of PACKED_FILES.split(" "))
  check(packedFiles.includes(file), `the tarball lacks ${file}`);
const manifest = readJson(ROOT, "packages/client/package.json");
check(manifest.license === "MIT", `the licence is ${manifest.license}, not the README's MIT`);
check(Boolean(manifest.repository?.url && manifest.engines?.node), "no repository or engines");
const scripts = Object.keys(manifest.scripts ?? {}).join();
check(
  scripts === "prepack" && !manifest["//"],
  `package.json ships scripts ${scripts} or a comment`,
);
const linters = project("package-lint", {});
scratch.push(linters);
run("npm", ["install", ...NO_NOISE, ...LINTERS], { cwd: linters });
const linter = (name: string) => path.join(linters, "node_modules/.bin", name);
try {
  run(linter("publint"), ["run", tarball, "--strict"], { cwd: linters });
} catch {
  failures.push("publint: the tarball has problems (above)");
}
const attw = spawnSync(linter("attw"), [tarball, "--format", "json"], { encoding: "utf8" });
const { analysis } = JSON.parse(attw.stdout);
const problems = analysis.types ? analysis.problems : ["no types"];
console.log(`arethetypeswrong: ${JSON.stringify(analysis.types)}, problems ${problems.length}`);
check(problems.length === 0, `arethetypeswrong: ${JSON.stringify(problems)}`);
const readme = fs.readFileSync(path.join(ROOT, "packages/client/README.md"), "utf8");
check(readme.includes(`TypeScript ${MIN_TYPESCRIPT} `), `its README states no ${MIN_TYPESCRIPT}`);
check(
  readme.includes(`at most ${BUNDLE_BUDGET_KB} kB`),
  `its README states no ${BUNDLE_BUDGET_KB} kB`,
);

// 2. A project outside the repository: the tarball and the two TypeScripts.
const app = project("client-outside", {}, { files: ["program.ts"] });
scratch.push(app);
const nodeVersion = run("node", ["--version"], { cwd: app }).stdout.trim();
const nodePath = run("sh", ["-c", "command -v node"], { cwd: app }).stdout.trim();
check(!nodePath.startsWith(ROOT), `node is the repository's own: ${nodePath}`);
console.log(`the machine's Node: ${nodeVersion} (${nodePath})`);
const minTypescript = `typescript-min@npm:typescript@${MIN_TYPESCRIPT}`;
run("npm", ["install", ...NO_NOISE, tarball, "typescript", minTypescript], { cwd: app });
const lock = readJson(app, "package-lock.json");
const installed = Object.keys(lock.packages)
  .filter((at) => at && fs.existsSync(path.join(app, at)))
  .map((at) => at.split("node_modules/").at(-1));
console.log(`installed: ${installed.join(", ")}`);
for (const name of SERVER_PACKAGES)
  check(!installed.includes(name), `the package brought ${name} into the project`);
const NODES = { "20": node20(nodePath, nodeVersion), "24": process.execPath };

// The runtime JavaScript a browser app ships, bundled and minified as its bundler would.
const dist = path.join(app, "node_modules/@petstore/client/dist");
const own = fs
  .readdirSync(dist)
  .filter((file) => file.endsWith(".js"))
  .map((file) => fs.readFileSync(path.join(dist, file)));
const entry = path.join(dist, "index.js");
const esbuild = [entry, "--bundle", "--minify", "--format=esm", "--platform=browser"];
const bundle = spawnSync("esbuild", esbuild, { encoding: "buffer" }).stdout;
check(bundle.length > 0, "esbuild made no bundle of the package");
const gzip = (bytes: Buffer) => gzipSync(bytes, { level: 9 }).length;
const sizes = `tarball ${packed.size} bytes; runtime JavaScript, gzip: ${gzip(Buffer.concat(own))} bytes of the package's own, ${gzip(bundle)} bytes bundled with openapi-fetch (esbuild --minify)`;
console.log(sizes);
check(gzip(bundle) <= BUNDLE_BUDGET_KB * 1024, `the bundle is over ${BUNDLE_BUDGET_KB} kB`);

// 3. The types under each module resolution, and the code in each module system.
const TSC = {
  min: "node_modules/typescript-min/bin/tsc",
  newest: "node_modules/typescript/bin/tsc",
};
const RESOLUTIONS = [
  { folder: "cjs", module: "commonjs", resolution: "node10", newest: false },
  { folder: "cjs", module: "node16", resolution: "node16", newest: true },
  { folder: "esm", module: "node16", resolution: "node16", newest: true },
  { folder: "esm", module: "esnext", resolution: "bundler", newest: true },
];
for (const folder of ["cjs", "esm"]) {
  const write = (file: string, json: object) =>
    fs.writeFileSync(path.join(app, folder, file), JSON.stringify(json));
  fs.mkdirSync(path.join(app, folder));
  write("package.json", { type: folder === "cjs" ? "commonjs" : "module" });
  write("tsconfig.json", { files: ["consumer.ts"] });
  fs.copyFileSync(
    path.join(ROOT, "test/outside/consumer.ts"),
    path.join(app, folder, "consumer.ts"),
  );
}
for (const [typescript, tsc] of Object.entries(TSC)) {
  for (const { folder, module, resolution, newest } of RESOLUTIONS) {
    if (typescript === "newest" && !newest) continue;
    const emit = typescript === "min" && module === "node16";
    const options = [
      ...["--strict", "--skipLibCheck", "false", "--target", "es2022", "--lib", "es2022,dom"],
      ...["--module", module, "--moduleResolution", resolution],
      ...(emit ? ["--outDir", folder] : ["--noEmit"]),
    ];
    try {
      run(NODES["24"], [tsc, "-p", folder, ...options], { cwd: app });
    } catch {
      failures.push(`TypeScript ${typescript}, ${resolution} from ${folder}: the types fail`);
    }
  }
}
for (const [major, node] of Object.entries(NODES)) {
  for (const folder of ["cjs", "esm"]) {
    const { stdout } = run(node, [`${folder}/consumer.js`], { cwd: app });
    check(/^consumer: network_error/.test(stdout), `Node ${major}, ${folder}: ${stdout}`);
  }
}

// 4. The program: --strict with both TypeScripts, then on Node 20 and 24 against a real
// `npm run dev`, directly and through the fault proxy.
fs.copyFileSync(path.join(ROOT, "test/outside/program.ts"), path.join(app, "program.ts"));
run(NODES["24"], [TSC.newest, "-p", ".", "--strict"], { cwd: app });
run(NODES["24"], [TSC.min, "-p", ".", "--strict", "--skipLibCheck", "false", "--noEmit"], {
  cwd: app,
});
const server = await startDevServer(PORT);
const proxy = await startFaultProxy(server.base);
try {
  const keyOutput = await server.keys("create", "--label", "ci", "--scope", "pets:read");
  const readOnlyKey = keyOutput.trim().split("\n").at(-1) ?? "";
  const env = {
    ...outsideEnv,
    PETSTORE_BASE_URL: `${server.base}/v1`,
    PETSTORE_API_KEY: LOCAL_DEV_KEY,
    PETSTORE_READ_ONLY_KEY: readOnlyKey,
    PETSTORE_PROXY_URL: proxy.url,
  };
  for (const [major, node] of Object.entries(NODES)) {
    await runAsync(node, ["out/program.js"], { cwd: app, env }).catch((err: Error) => {
      failures.push(`Node ${major}: ${err.message} (its output is above)`);
    });
  }

  // 5. The generators integrators reach for, on the served document.
  const document = await (await fetch(`${server.base}/v1/openapi.json`)).text();
  // hey-api needs Node 22.18 or newer: the generators run on this repository's Node.
  const generatorEnv = { ...outsideEnv, PATH: process.env.PATH };
  for (const generator of GENERATORS) {
    const dir = project(generator.name, {
      "openapi.json": document,
      "create.ts": generator.create,
    });
    scratch.push(dir);
    const options = { cwd: dir, env: generatorEnv };
    run("npm", ["install", ...NO_NOISE, ...generator.install], options);
    const [bin = "", ...args] = generator.generate;
    try {
      const { printed } = run(path.join("node_modules", ".bin", bin), args, options);
      check(!/warn|⚠/i.test(printed), `${bin} printed a warning (above)`);
      run("npx", ["tsc", "-p", ".", "--strict", "--noEmit"], options);
    } catch (err) {
      failures.push(`${generator.name}: ${(err as Error).message} (its output is above)`);
    }
  }
} finally {
  proxy.stop();
  await server.stop();
}

if (failures.length > 0) {
  console.error(`\nclient:outside FAILED (folders kept: ${scratch.join(", ")}):`);
  for (const failure of failures) console.error(`- ${failure}`);
  process.exit(1);
}
for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
console.log(`\nclient:outside passed: ${packed.filename}, ${sizes}`);

/**
 * Node 20, the oldest the package supports: the machine's own Node when it is 20 (these
 * machines'), else one installed from npm (the `node` package) into a folder of its own.
 */
function node20(machineNode: string, version: string): string {
  if (version.startsWith("v20.")) return machineNode;
  const dir = project("node20", {});
  scratch.push(dir);
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "node20", private: true, allowScripts: { node: true } }),
  );
  run("npm", ["install", ...NO_NOISE, "node@20"], { cwd: dir });
  const node = path.join(dir, "node_modules/.bin/node");
  const installedVersion = run(node, ["--version"], { cwd: dir }).stdout.trim();
  check(installedVersion.startsWith("v20."), `npm's node@20 is ${installedVersion}`);
  return node;
}
