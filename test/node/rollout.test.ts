// `npm run rollout` as the release workflows run it: on standard input, what wrangler
// wrote for programs. A real record: the pull-request workflow's `wrangler versions upload
// --env staging --preview-alias` with --dry-run (which needs no account) and
// WRANGLER_OUTPUT_FILE_PATH set.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { scriptEnv } from "../live/dev-server.ts";

const dir = mkdtempSync(path.join(tmpdir(), "petstore-rollout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm run -s rollout -- <args>` with `input` on standard input: exit code and output. */
function rollout(args: string[], input: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      "npm",
      ["run", "-s", "rollout", "--", ...args],
      { env: scriptEnv },
      (err, stdout, stderr) =>
        resolve({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

it("a dry-run upload's real record: rollout uploaded says no version was uploaded", {
  timeout: 120_000,
}, async () => {
  const file = path.join(dir, "wrangler-output.ndjson");
  const upload = ["versions", "upload", "--env", "staging", "--preview-alias", "ci", "--dry-run"];
  await promisify(execFile)("npx", ["wrangler", ...upload, "--outdir", path.join(dir, "out")], {
    env: { ...scriptEnv, WRANGLER_OUTPUT_FILE_PATH: file },
  });
  const record = readFileSync(file, "utf8");
  expect(record).toMatch(/"type":"version-upload"/);
  expect(await rollout(["uploaded"], record)).toEqual({
    code: 1,
    stdout: "",
    stderr: "error: the version-upload record names no version: a --dry-run uploads none\n",
  });
});

// Five node processes: 5 s is short on two busy cores.
it("serving --allow-none: no deployment yet is version-id= and a warning; wrong words exit 2", {
  timeout: 30_000,
}, async () => {
  expect(await rollout(["serving", "--allow-none"], "")).toEqual({
    code: 0,
    stdout: "version-id=\n",
    stderr:
      "warning: no deployment serves this environment yet: there is nothing to roll back to\n",
  });
  for (const args of [
    ["serving", "--force"],
    ["uploaded", "--allow-none"],
    ["bookmark", "extra"],
    [],
  ]) {
    expect(await rollout(args, "")).toMatchObject({
      code: 2,
      stdout: "",
      stderr: expect.stringMatching(/^error: expected serving/),
    });
  }
});
