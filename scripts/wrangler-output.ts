// What the release workflows need from wrangler's output, parsed without Node APIs so
// test/wrangler-output.test.ts runs these very functions in workerd:
// - the version that serves 100% of an environment now (`wrangler deployments status
//   --json`), recorded before a deploy as the version to roll back to;
// - the id of the version that `wrangler versions upload` just created.

export class OutputError extends Error {}

const VERSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Deployment {
  versions?: Array<{ version_id?: unknown; percentage?: unknown }>;
}

/**
 * The version id that serves all traffic in the output of `wrangler deployments status
 * --json` (one deployment: `{ id, created_on, versions: [{ version_id, percentage }] }`).
 * A deployment split between versions is refused: a rollout is in progress, and
 * which version to return to is a person's decision.
 */
export function servingVersion(output: string): string {
  const start = output.indexOf("{");
  const end = output.lastIndexOf("}");
  if (start === -1 || end < start) {
    throw new OutputError("no deployment in the output of wrangler deployments status --json");
  }
  let deployment: Deployment;
  try {
    deployment = JSON.parse(output.slice(start, end + 1)) as Deployment;
  } catch {
    throw new OutputError("the output of wrangler deployments status --json is not JSON");
  }
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
