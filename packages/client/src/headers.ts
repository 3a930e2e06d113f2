// What the client reads from the API's response headers. Each has one format in the
// contract, so a regular expression reads it: no parser library (http-link-header, the
// one that fits, is CommonJS only and larger than all of this package's own code).

/** The target of the link whose `rel` includes `relation` in a `Link` header (RFC 8288). */
export function linkTarget(link: string | null, relation = "next"): string | undefined {
  for (const [, target, params = ""] of (link ?? "").matchAll(/<([^>]*)>([^,]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(params);
    const relations = (rel?.[1] ?? rel?.[2] ?? "").toLowerCase().split(/\s+/);
    if (relations.includes(relation)) return target;
  }
  return undefined;
}

/** `Retry-After` (RFC 9110: delay-seconds or an HTTP-date) as whole seconds from `now`. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The scope a `Bearer error="insufficient_scope", scope="..."` challenge names (RFC 6750). */
export function insufficientScope(challenge: string | null): string | undefined {
  if (!/\berror="insufficient_scope"/i.test(challenge ?? "")) return undefined;
  return /\bscope="([^"]*)"/i.exec(challenge ?? "")?.[1];
}

/** Whether a response's body is JSON by its `Content-Type` (`application/json`, parameters allowed). */
export const isJson = (headers: Headers) =>
  /^application\/json\s*(?:;|$)/i.test(headers.get("Content-Type") ?? "");
