// What no tool's words may say to an agent (docs/agents.md, "Tools"): HTTP, in the workerd tests
// and against `npm run dev` alike.

/** HTTP wording: headers, status codes, how a value travels in a URL or a body. */
export const HTTP_WORDING =
  /HTTP\b(?! API)|header|status code|\b(?:400|401|403|404|405|409|410|412|415|422|429|503)\b|decimal digits|leading zero|query|on the wire|\/v1|Link|rel=|If-Match|ETag|Idempotency-Key|Merge Patch|int64|request body/;

/** Every description in a JSON Schema, at any depth. */
export const proseOf = (node: unknown): string[] =>
  node === null || typeof node !== "object"
    ? []
    : Object.entries(node).flatMap(([k, v]) =>
        k === "description" && typeof v === "string" ? [v] : proseOf(v),
      );
