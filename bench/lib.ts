// Shared by the benchmark scripts: paths, the project's wrangler on this Node,
// the bundle build and its gzip size, CPU pinning, machine facts.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const OUT = path.join(ROOT, "bench", ".out");

/** Budget of issue 4: the minified bundle, gzip, in KiB. */
export const BUNDLE_BUDGET_KIB = 45;
/** Budget of issue 4: start-up time over a raw worker, in ms. */
export const STARTUP_BUDGET_MS = 40;

/** The project's wrangler, run on this very Node (wrangler needs Node >= 22.12). */
export function wrangler(args: string[], options: { cwd?: string } = {}): string {
  const cli = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.status !== 0) {
    throw new Error(
      `wrangler ${args.join(" ")} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`,
    );
  }
  return `${result.stdout}${result.stderr}`;
}

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
  const output = wrangler(["deploy", "--dry-run", "--env=", "--outdir", outdir]);
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
 * `file`'s text around the section that runs from the `start` marker to the `end` marker
 * (both kept in `section`); undefined when the file or either marker is missing.
 */
export function markedSection(
  file: string,
  start: string,
  end: string,
): { before: string; section: string; after: string } | undefined {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b <= a) return undefined;
  const close = b + end.length;
  return { before: text.slice(0, a), section: text.slice(a, close), after: text.slice(close) };
}

/** The project's formatter owns markdown too: leaves `file` as `npm run lint` wants it. */
export function formatMarkdown(file: string): void {
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

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile of raw samples (no histogram, no padding). */
export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}
