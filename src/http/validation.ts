// Validators of an operation's path parameters, query and JSON body, from its schemas, and
// the one hook that turns zod issues into the service's Error.
import { zValidator } from "@hono/zod-validator";
import type { Context, MiddlewareHandler } from "hono";
import type * as z from "zod/mini";
import type { $ZodIssue } from "zod/v4/core";
import type { ErrorDetail } from "../errors.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

export type Target = "json" | "query" | "param";

function fieldOf(issue: $ZodIssue): string {
  return issue.path.map(String).join(".");
}

function describeIssue(issue: $ZodIssue): ErrorDetail[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      field: [...issue.path.map(String), key].join("."),
      message: "is not an accepted field",
    }));
  }
  return [{ field: fieldOf(issue), message: issue.message }];
}

/** Each validated target: how a message names it, its error code, where the document puts it. */
const TARGETS = {
  json: { label: "Field", code: "validation_failed", in: "body" },
  query: { label: "Query parameter", code: "invalid_parameter", in: "query" },
  param: { label: "Path parameter", code: "invalid_parameter", in: "path" },
} as const;

/** An issue about the body as a whole (not a JSON object), rather than about one field. */
function isAboutWholeBody(issue: $ZodIssue): boolean {
  return issue.path.length === 0 && issue.code !== "unrecognized_keys";
}

export function issuesToApiError(target: Target, issues: readonly $ZodIssue[]): ApiError {
  const details = issues.flatMap(describeIssue);
  const first = details[0];
  if (!first) return new ApiError("validation_failed", "The request is invalid.");
  // By the path, not the rendered field: an unknown key may be the empty string.
  if (target === "json" && issues[0] && isAboutWholeBody(issues[0])) {
    return new ApiError("validation_failed", `Request body ${first.message}.`, { details });
  }
  const { label, code } = TARGETS[target];
  const more =
    details.length > 1
      ? ` (and ${details.length - 1} more problem${details.length > 2 ? "s" : ""}, see details)`
      : "";
  return new ApiError(code, `${label} "${first.field}" ${first.message}.${more}`, {
    details,
  });
}

/** The hook given to every `zValidator`: invalid input becomes our 400, never Hono's. */
function validationHook(
  result:
    | { success: true }
    | { success: false; error: { issues: readonly $ZodIssue[] }; target: Target },
  _c: Context,
): void {
  if (!result.success) throw issuesToApiError(result.target, result.error.issues);
}

/**
 * Parsed synchronously: no schema of ours refines or transforms asynchronously, and
 * `safeParseAsync` (the default) costs a promise per check on every request.
 */
const options = {
  validationFunction: (schema: z.ZodMiniType, value: unknown) => schema.safeParse(value),
} as Parameters<typeof zValidator>[3];

/** Validates one target of the request with `schema`; `c.req.valid(target)` is the result. */
export function validator(target: Target, schema: z.ZodMiniType) {
  return zValidator(
    target,
    schema,
    validationHook,
    options,
  ) as unknown as MiddlewareHandler<AppEnv>;
}
