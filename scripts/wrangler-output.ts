// What the release workflows need from wrangler, read from what it writes for programs: the
// WRANGLER_OUTPUT_FILE_PATH record (version-upload, command-failed) and `--json` output
// (deployments status, d1 time-travel info). Free of Node APIs: tested in workerd.
import { z } from "zod/mini";

export class OutputError extends Error {}

const VERSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** `value` as `schema` accepts it; an OutputError naming `what` otherwise. */
function check<T>(schema: z.ZodMiniType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new OutputError(`${what} is not what wrangler 4 writes there`);
  return parsed.data;
}

/** `text` as JSON that `schema` accepts; an OutputError naming `what` otherwise. */
function parse<T>(schema: z.ZodMiniType<T>, text: string, what: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new OutputError(`${what} is not JSON`);
  }
  return check(schema, json, what);
}

const Record = z.looseObject({ type: z.string() });
const VersionUpload = z.object({
  type: z.literal("version-upload"),
  version_id: z.nullable(z.string()),
  preview_url: z.optional(z.nullable(z.string())),
  preview_alias_url: z.optional(z.nullable(z.string())),
});
const CommandFailed = z.object({ type: z.literal("command-failed"), message: z.string() });

/** The records of a WRANGLER_OUTPUT_FILE_PATH file. */
function records(file: string): Array<z.infer<typeof Record>> {
  return file
    .split("\n")
    .filter((line) => line.trim())
    .map((line, i) => parse(Record, line, `line ${i + 1} of wrangler's output file`));
}

/**
 * The version `wrangler versions upload` created, and the URL that previews it (the alias
 * URL when it has one), from its record file.
 */
export function uploadedVersion(file: string): { versionId: string; previewUrl?: string } {
  const all = records(file);
  const failed = all.find((r) => r.type === "command-failed");
  if (failed) {
    const { message } = check(CommandFailed, failed, "the command-failed record");
    throw new OutputError(`wrangler versions upload failed: ${message}`);
  }
  const uploads = all.filter((r) => r.type === "version-upload");
  const found = `found ${uploads.length}`;
  if (uploads.length !== 1)
    throw new OutputError(`expected one version-upload record in wrangler's output file, ${found}`);
  const upload = check(VersionUpload, uploads[0], "the version-upload record");
  if (upload.version_id === null)
    throw new OutputError("the version-upload record names no version: a --dry-run uploads none");
  if (!VERSION_ID.test(upload.version_id))
    throw new OutputError(`the version-upload record's version_id is not a version id`);
  const previewUrl = upload.preview_alias_url ?? upload.preview_url;
  return { versionId: upload.version_id, ...(previewUrl ? { previewUrl } : {}) };
}

const Deployment = z.object({
  versions: z.array(z.object({ version_id: z.string(), percentage: z.number() })),
});

/**
 * The version that serves all traffic, from `wrangler deployments status --json` (one
 * deployment: `{ id, created_on, versions: [{ version_id, percentage }] }`). A deployment
 * split between versions is refused: a rollout is in progress, and which version to
 * return to is a person's decision.
 */
export function servingVersion(output: string): string {
  const what = "the output of wrangler deployments status --json";
  const { versions } = parse(Deployment, output, what);
  const [only] = versions;
  if (versions.length > 1 || (only && only.percentage !== 100)) {
    const split = versions.map((v) => `${v.version_id}@${v.percentage}%`);
    throw new OutputError(
      `traffic is split (${split.join(", ")}): finish that rollout or roll it back first (docs/release.md)`,
    );
  }
  if (!only || !VERSION_ID.test(only.version_id))
    throw new OutputError("the deployment names no version serving 100% of traffic");
  return only.version_id;
}

/** `00000001-00000002-00004e2f-0a83ea2f...`: the `bookmark` of `wrangler d1 time-travel info --json`. */
export function timeTravelBookmark(output: string): string {
  const what = "the output of wrangler d1 time-travel info --json";
  const { bookmark } = parse(z.object({ bookmark: z.string() }), output, what);
  if (!BOOKMARK.test(bookmark)) throw new OutputError(`no Time Travel bookmark in ${what}`);
  return bookmark;
}
