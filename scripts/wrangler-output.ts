// What the release workflows need from wrangler's output, parsed without Node APIs so
// test/wrangler-output.test.ts runs these very functions in workerd:
// - the version that serves 100% of an environment now (`wrangler deployments status
//   --json`), recorded before a deploy as the version to roll back to;
// - the id of the version that `wrangler versions upload` just created;
// - D1's Time Travel bookmark (`wrangler d1 time-travel info DB --json`), the restore
//   point noted before a deploy's migrations.

export class OutputError extends Error {}

const VERSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Deployment {
  versions?: Array<{ version_id?: unknown; percentage?: unknown }>;
}

/** The one JSON object in a wrangler command's output (warnings may surround it). */
function jsonObject(output: string, command: string): Record<string, unknown> {
  const start = output.indexOf("{");
  const end = output.lastIndexOf("}");
  if (start === -1 || end < start)
    throw new OutputError(`no JSON object in the output of ${command}`);
  try {
    return JSON.parse(output.slice(start, end + 1)) as Record<string, unknown>;
  } catch {
    throw new OutputError(`the output of ${command} is not JSON`);
  }
}

/**
 * The version id that serves all traffic in the output of `wrangler deployments status
 * --json` (one deployment: `{ id, created_on, versions: [{ version_id, percentage }] }`).
 * A deployment split between versions is refused: a rollout is in progress, and
 * which version to return to is a person's decision.
 */
export function servingVersion(output: string): string {
  const deployment = jsonObject(output, "wrangler deployments status --json") as Deployment;
  const versions = Array.isArray(deployment.versions) ? deployment.versions : [];
  const whole = versions.filter((v) => v.percentage === 100);
  if (versions.length > 1 || (versions.length === 1 && whole.length === 0)) {
    const split = versions.map((v) => `${String(v.version_id)}@${String(v.percentage)}%`);
    throw new OutputError(
      `traffic is split (${split.join(", ")}): finish that rollout or roll it back first (docs/release.md)`,
    );
  }
  const id = whole[0]?.version_id;
  if (typeof id !== "string" || !VERSION_ID.test(id)) {
    throw new OutputError("the deployment names no version serving 100% of traffic");
  }
  return id;
}

/** The id from the `Worker Version ID: <id>` line of `wrangler versions upload`. */
export function uploadedVersion(output: string): string {
  const ids = [...output.matchAll(/^\s*Worker Version ID:\s*(\S+)\s*$/gm)].map((m) => m[1]);
  if (ids.length !== 1 || !VERSION_ID.test(ids[0] ?? "")) {
    throw new OutputError(
      `expected one "Worker Version ID: <id>" line in the output of wrangler versions upload, found ${ids.length}`,
    );
  }
  return ids[0] as string;
}

/** `00000001-00000002-00004e2f-0a83ea2f...`: the `bookmark` of `wrangler d1 time-travel info --json`. */
export function timeTravelBookmark(output: string): string {
  const { bookmark } = jsonObject(output, "wrangler d1 time-travel info --json");
  if (
    typeof bookmark !== "string" ||
    !/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/.test(bookmark)
  ) {
    throw new OutputError(
      `no Time Travel bookmark in the output of wrangler d1 time-travel info --json`,
    );
  }
  return bookmark;
}
