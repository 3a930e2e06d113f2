// What every state change must be (docs/platform.md, "Who may do what"): sent by the
// platform's own pages (Origin) with a JSON body, else 403, before anything is read.
// Then the body's size (413), its syntax (400) and its fields (400, each named).
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type * as z from "zod/mini";
import { MAX_BODY_BYTES } from "../../src/config.ts";
import { addressBucket } from "../../src/http/client-address.ts";
import {
  isIdentityEncoding,
  isJsonMediaType,
  parseJsonBody,
  readBodyCapped,
} from "../../src/http/json-body.ts";
import { issuesToApiError } from "../../src/http/validation.ts";
import { LIMIT_RETRY_AFTER_SECONDS } from "./config.ts";
import { PlatformError } from "./errors.ts";
import type { PlatformAppEnv } from "./types.ts";

const show = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);

/**
 * The check of every state change: `Origin` the platform's own (a page of another site, or no
 * page, changes nothing), then a JSON body without Content-Encoding (a form, which any site may
 * post without a preflight, is refused: Hono's `csrf` lets JSON through but checks only forms),
 * read within MAX_BODY_BYTES and parsed for `bodyOf`.
 */
export const stateChange = createMiddleware<PlatformAppEnv>(async (c, next) => {
  const origin = c.req.header("Origin");
  if (origin !== c.var.rp.origin) {
    throw new PlatformError(
      "cross_origin_request",
      `Requests that change something must come from the platform's own pages (Origin ${c.var.rp.origin}); this one's Origin is ${origin === undefined ? "missing" : show(origin)}.`,
    );
  }
  if (
    !isJsonMediaType(c.req.header("Content-Type")) ||
    !isIdentityEncoding(c.req.header("Content-Encoding"))
  ) {
    throw new PlatformError(
      "json_required",
      'Requests that change something must send a JSON body with "Content-Type: application/json" (UTF-8, the only charset of JSON; no Content-Encoding).',
    );
  }
  c.set("jsonBody", parseJsonBody(await readBodyCapped(c.req.raw.body, MAX_BODY_BYTES)));
  await next();
});

/** The request's JSON body, validated by `schema`; 400 naming the field otherwise. */
export function bodyOf<T extends z.ZodMiniType>(
  c: Context<PlatformAppEnv>,
  schema: T,
): z.output<T> {
  const result = schema.safeParse(c.var.jsonBody);
  if (!result.success) throw issuesToApiError("json", result.error.issues);
  return result.data;
}

/** The client address (CF-Connecting-IP) that per-address limits count: an IPv6 one by its /64. */
export function clientAddress(c: Context<PlatformAppEnv>): string {
  return addressBucket(c.req.header("CF-Connecting-IP") ?? "");
}

/**
 * Counts one event of the client address against `limiter`; past the limit, 429 with
 * Retry-After.
 */
export async function countAgainst(
  c: Context<PlatformAppEnv>,
  limiter: RateLimit,
  what: string,
): Promise<void> {
  const { success } = await limiter.limit({ key: `address:${clientAddress(c)}` });
  if (!success) {
    throw new PlatformError("rate_limited", `Too many ${what} from this address; retry later.`, {
      headers: { "Retry-After": String(LIMIT_RETRY_AFTER_SECONDS) },
    });
  }
}
