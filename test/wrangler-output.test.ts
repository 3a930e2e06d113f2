// The release workflows read three things from wrangler (scripts/wrangler-output.ts): the
// version serving an environment before a deploy (the one to roll back to), the id and
// preview URL of an uploaded version, and D1's Time Travel bookmark before the migrations.
// The samples follow wrangler 4.164: `deployments status --json` prints the deployment
// object of the Workers API; `versions upload` appends its records to the file
// WRANGLER_OUTPUT_FILE_PATH names (test/node/rollout.test.ts feeds a real one to the
// script); `d1 time-travel info --json` prints the API's `{ bookmark }`.
import { describe, expect, it } from "vitest";
import {
  OutputError,
  servingVersion,
  timeTravelBookmark,
  uploadedVersion,
} from "../scripts/wrangler-output.ts";

const OLD = "5b0b5c5e-2f43-4c3a-9b1e-0d6f1c2a3b4c";
const NEW = "0f6bfa3e-6b2a-4c1d-9e8f-0123456789ab";

function deployment(versions: Array<{ version_id: string; percentage: number }>): string {
  return JSON.stringify(
    {
      id: "8f9d6c1e-1111-4222-8333-944455556666",
      source: "wrangler",
      strategy: "percentage",
      author_email: "ci@example.com",
      created_on: "2026-11-22T10:00:00.000000Z",
      annotations: { "workers/message": "main at abc" },
      versions,
    },
    null,
    2,
  );
}

function outputError(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(OutputError);
    return (err as Error).message;
  }
  throw new Error("no OutputError");
}

describe("servingVersion (wrangler deployments status --json)", () => {
  it("returns the version at 100%", () => {
    expect(servingVersion(deployment([{ version_id: OLD, percentage: 100 }]))).toBe(OLD);
  });

  it("refuses a split deployment: a rollout is in progress", () => {
    const message = outputError(() =>
      servingVersion(
        deployment([
          { version_id: NEW, percentage: 10 },
          { version_id: OLD, percentage: 90 },
        ]),
      ),
    );
    expect(message).toBe(
      `traffic is split (${NEW}@10%, ${OLD}@90%): finish that rollout or roll it back first (docs/release.md)`,
    );
  });

  it("refuses output that is not one deployment, or names no version at 100%", () => {
    const what = "the output of wrangler deployments status --json";
    expect(outputError(() => servingVersion(""))).toBe(`${what} is not JSON`);
    // Text around the JSON is not read past: the command prints JSON alone.
    const noisy = `▲ [WARNING] a newer wrangler exists\n${deployment([{ version_id: OLD, percentage: 100 }])}`;
    expect(outputError(() => servingVersion(noisy))).toBe(`${what} is not JSON`);
    expect(outputError(() => servingVersion('{ "versions": "all" }'))).toBe(
      `${what} is not what wrangler 4 writes there`,
    );
    expect(outputError(() => servingVersion(deployment([])))).toMatch(/no version serving 100%/);
    expect(
      outputError(() => servingVersion(deployment([{ version_id: "latest", percentage: 100 }]))),
    ).toMatch(/no version serving 100%/);
  });
});

describe("uploadedVersion (the records of wrangler versions upload)", () => {
  const line = (record: object) =>
    JSON.stringify({ version: 1, ...record, timestamp: "2026-11-22T10:00:00.000Z" });
  const session = line({
    type: "wrangler-session",
    wrangler_version: "4.164.0",
    command_line_args: ["versions", "upload"],
  });
  const upload = (fields: object) =>
    line({
      type: "version-upload",
      worker_name: "petstore-api-staging",
      worker_tag: "0a1b2c3d4e5f",
      version_id: NEW,
      wrangler_environment: "staging",
      worker_name_overridden: false,
      bundle_size: { raw_bytes: 157_648, gzip_bytes: 39_879 },
      ...fields,
    });
  const file = (...lines: string[]) => `${lines.join("\n")}\n`;
  const ALIAS = "https://pr-7-petstore-api-staging.example.workers.dev";
  const VERSION_URL = "https://0f6bfa3e-petstore-api-staging.example.workers.dev";

  it("returns the new version and the URL that previews it, the alias URL first", () => {
    expect(
      uploadedVersion(
        file(session, upload({ preview_url: VERSION_URL, preview_alias_url: ALIAS })),
      ),
    ).toEqual({
      versionId: NEW,
      previewUrl: ALIAS,
    });
    expect(uploadedVersion(file(session, upload({ preview_url: VERSION_URL })))).toEqual({
      versionId: NEW,
      previewUrl: VERSION_URL,
    });
    expect(uploadedVersion(file(upload({})))).toEqual({ versionId: NEW });
  });

  it("refuses a file without exactly one well-formed upload, saying what it holds", () => {
    expect(outputError(() => uploadedVersion(file(session)))).toBe(
      "expected one version-upload record in wrangler's output file, found 0",
    );
    expect(
      outputError(() => uploadedVersion(file(upload({}), upload({ version_id: OLD })))),
    ).toMatch(/found 2$/);
    expect(outputError(() => uploadedVersion(file(upload({ version_id: null }))))).toBe(
      "the version-upload record names no version: a --dry-run uploads none",
    );
    expect(outputError(() => uploadedVersion(file(upload({ version_id: "not-a-uuid" }))))).toMatch(
      /is not a version id/,
    );
    expect(outputError(() => uploadedVersion(file(upload({ version_id: 7 }))))).toBe(
      "the version-upload record is not what wrangler 4 writes there",
    );
    expect(outputError(() => uploadedVersion(`Worker Version ID: ${NEW}`))).toBe(
      "line 1 of wrangler's output file is not JSON",
    );
    const failed = line({ type: "command-failed", code: 10_000, message: "Authentication error" });
    expect(outputError(() => uploadedVersion(file(session, failed)))).toBe(
      "wrangler versions upload failed: Authentication error",
    );
  });
});

describe("timeTravelBookmark (wrangler d1 time-travel info DB --json)", () => {
  const BOOKMARK = "00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683";

  it("returns the bookmark; refuses output without a well-formed one", () => {
    expect(timeTravelBookmark(JSON.stringify({ bookmark: BOOKMARK }, null, 2))).toBe(BOOKMARK);
    expect(outputError(() => timeTravelBookmark("✘ [ERROR] A request failed"))).toMatch(
      /is not JSON/,
    );
    expect(outputError(() => timeTravelBookmark('{ "bookmark": "yesterday" }'))).toMatch(
      /no Time Travel bookmark/,
    );
  });
});
