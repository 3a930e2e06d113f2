// Shared by the benchmark scripts: paths, the bundle build and its gzip size, CPU pinning, machine facts.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { wrangler } from "../scripts/wrangler.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const OUT = path.join(ROOT, "bench", ".out");

/** Budget of issue 4: the minified bundle, gzip, in KiB. */
export const BUNDLE_BUDGET_KIB = 45;
/** Budget of issue 4: start-up time over a raw worker, in ms. */
export const STARTUP_BUDGET_MS = 40;

export interface Bundle {
  /** The built worker module. */
  file: string;
  bytes: number;
  gzipBytes: number;
  gzipKiB: number;
  /** wrangler's own "Total Upload: ... / gzip: ..." line, for reference. */
  wranglerSays: string | undefined;
}

/** `wrangler deploy --dry-run` of the top-level (local) configuration into `outdir`. */
export function buildBundle(outdir: string): Bundle {
  const output = wrangler(["deploy", "--dry-run", "--env=", "--outdir", outdir], {
    capture: true,
    ci: true,
  });
  const file = path.join(outdir, "index.js");
  const code = readFileSync(file);
  const gzipBytes = gzipSync(code, { level: 9 }).byteLength;
  return {
    file,
    bytes: code.byteLength,
    gzipBytes,
    gzipKiB: gzipBytes / 1024,
    wranglerSays: /Total Upload:[^\n]*/.exec(output)?.[0].trim(),
  };
}

/**
 * Rewrites a generated section of a document (from the line holding `<!-- NAME:start` to
 * `<!-- NAME:end -->`; NAME is `measured` unless given) with `section`, keeps the rest as
 * written by hand, and leaves the file as `npm run lint` wants it (the project's formatter
 * owns markdown too).
 */
export function writeMeasured(file: string, section: string, name = "measured"): void {
  const text = readFileSync(file, "utf8");
  const start = text.indexOf("\n", text.indexOf(`<!-- ${name}:start`));
  const end = text.indexOf(`<!-- ${name}:end -->`);
  if (start < 0 || end < start) throw new Error(`${file} has no ${name}:start/end markers`);
  writeFileSync(file, `${text.slice(0, start)}\n\n${section}\n\n${text.slice(end)}`);
  spawnSync(path.join(ROOT, "node_modules", ".bin", "biome"), ["format", "--write", file], {
    stdio: "ignore",
  });
}

/** Pins this process (all its threads) to `cpu`; false when taskset is unavailable. */
export function pinSelf(cpu: number): boolean {
  const result = spawnSync("taskset", ["-a", "-p", "-c", String(cpu), String(process.pid)], {
    stdio: "ignore",
  });
  return result.status === 0;
}

export function hasTaskset(): boolean {
  return spawnSync("taskset", ["-V"], { stdio: "ignore" }).status === 0;
}

/** `[command, ...args]` prefixed with `taskset -c cpu` when pinning is possible. */
export function pinned(cpu: number, command: string[], canPin: boolean): string[] {
  return canPin ? ["taskset", "-c", String(cpu), ...command] : command;
}

function versionOf(pkg: string): string {
  try {
    const json = JSON.parse(
      readFileSync(path.join(ROOT, "node_modules", pkg, "package.json"), "utf8"),
    ) as { version: string };
    return json.version;
  } catch {
    return "unknown";
  }
}

export interface Machine {
  date: string;
  cpus: number;
  cpuModel: string;
  os: string;
  node: string;
  wrangler: string;
  miniflare: string;
  workerd: string;
  autocannon: string;
  loadAverage: string;
}

export function machine(): Machine {
  const workerd = spawnSync(path.join(ROOT, "node_modules", ".bin", "workerd"), ["--version"], {
    encoding: "utf8",
  });
  const nproc = spawnSync("nproc", [], { encoding: "utf8" });
  const model = (() => {
    try {
      const info = readFileSync("/proc/cpuinfo", "utf8");
      return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim();
    } catch {
      return undefined;
    }
  })();
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    cpus: Number(nproc.stdout?.trim()) || os.availableParallelism(),
    cpuModel: model ?? os.cpus()[0]?.model ?? "unknown",
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    wrangler: versionOf("wrangler"),
    miniflare: versionOf("miniflare"),
    workerd: `${versionOf("workerd")} (${workerd.stdout?.trim() || "?"})`,
    autocannon: versionOf("autocannon"),
    loadAverage: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", "),
  };
}
