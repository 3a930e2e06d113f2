// The release workflows read three things from wrangler (scripts/wrangler-output.ts): the
// version serving an environment before a deploy (the one to roll back to), the id of an
// uploaded version, and D1's Time Travel bookmark before the migrations. The samples
// follow wrangler 4.164's output: `deployments status --json` prints the deployment
// object of the Workers API; `versions upload` logs "Worker Version ID: <id>";
// `d1 time-travel info --json` prints the API's `{ bookmark }`.
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
  it("answers the version at 100%, with wrangler's noise around the JSON", () => {
    expect(servingVersion(deployment([{ version_id: OLD, percentage: 100 }]))).toBe(OLD);
    expect(
      servingVersion(
        `\n▲ [WARNING] a newer wrangler exists\n${deployment([{ version_id: OLD, percentage: 100 }])}\n`,
      ),
    ).toBe(OLD);
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

  it("refuses output without a deployment or without a version at 100%", () => {
    expect(outputError(() => servingVersion(""))).toMatch(/no JSON object in the output/);
    expect(outputError(() => servingVersion("{ not json }"))).toMatch(/is not JSON/);
    expect(outputError(() => servingVersion(deployment([])))).toMatch(/no version serving 100%/);
    expect(
      outputError(() => servingVersion(deployment([{ version_id: "latest", percentage: 100 }]))),
    ).toMatch(/no version serving 100%/);
  });
});

describe("uploadedVersion (wrangler versions upload)", () => {
  const upload = (id: string) => `Total Upload: 95.12 KiB / gzip: 29.90 KiB
Worker Startup Time: 12 ms
Your Worker has access to the following bindings:
env.DB (petstore-production)      D1 Database
Uploaded petstore-api-production (3.21 sec)
Worker Version ID: ${id}
To deploy this version to production traffic use the command wrangler versions deploy
`;

  it("answers the id of the Worker Version ID line; refuses output without exactly one well-formed id", () => {
    expect(uploadedVersion(upload(NEW))).toBe(NEW);
    expect(outputError(() => uploadedVersion("--dry-run: exiting now."))).toMatch(/found 0/);
    expect(outputError(() => uploadedVersion(upload("not-a-uuid")))).toMatch(/found 1/);
    expect(outputError(() => uploadedVersion(upload(NEW) + upload(OLD)))).toMatch(/found 2/);
  });
});

describe("timeTravelBookmark (wrangler d1 time-travel info DB --json)", () => {
  const BOOKMARK = "00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683";

  it("answers the bookmark; refuses output without a well-formed one", () => {
    expect(timeTravelBookmark(JSON.stringify({ bookmark: BOOKMARK }, null, 2))).toBe(BOOKMARK);
    expect(outputError(() => timeTravelBookmark("✘ [ERROR] A request failed"))).toMatch(
      /no JSON object/,
    );
    expect(outputError(() => timeTravelBookmark('{ "bookmark": "yesterday" }'))).toMatch(
      /no Time Travel bookmark/,
    );
  });
});
