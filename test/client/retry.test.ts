// Unit tests of the client package's logic that the worker cannot drive at will: the
// header formats it reads, the waits between retries, and which answers are retried
// (a scripted `send` answers 429 and 503 the way the contract says the API does).
import { describe, expect, it } from "vitest";
import { PetStoreError } from "../../packages/client/src/errors.ts";
import {
  insufficientScope,
  nextLink,
  retryAfterSeconds,
} from "../../packages/client/src/headers.ts";
import { retryDelay, retrying } from "../../packages/client/src/retry.ts";

const NOW = Date.parse("2026-11-25T12:00:00Z");

/** An answer of the API: an Error object for `status` with `headers`. */
function answer(status: number, headers: Record<string, string> = {}): Response {
  const body = status < 300 ? {} : { code: "x", message: `status ${status}`, status };
  return Response.json(body, { status, headers });
}

describe("headers", () => {
  it("nextLink: the target of rel=next, whatever else the header holds", () => {
    const next = "https://api.example/v1/pets?limit=2&cursor=AbC-_9";
    expect(nextLink(`<${next}>; rel="next"`)).toBe(next);
    expect(nextLink(`</v1/pets>; rel="successor-version", <${next}>; rel=next`)).toBe(next);
    expect(nextLink(`<${next}>; title="a; b"; rel="prev next"`)).toBe(next);
    expect(nextLink('</v1/pets>; rel="successor-version", </v1/docs>; rel="deprecation"')).toBe(
      undefined,
    );
    expect(nextLink(`<${next}>; rel="nextish"`)).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
  });

  it("retryAfterSeconds: delay-seconds or an HTTP-date", () => {
    expect(retryAfterSeconds("5", NOW)).toBe(5);
    expect(retryAfterSeconds("0", NOW)).toBe(0);
    expect(retryAfterSeconds("Wed, 25 Nov 2026 12:00:30 GMT", NOW)).toBe(30);
    expect(retryAfterSeconds("Wed, 25 Nov 2026 11:00:00 GMT", NOW)).toBe(0);
    expect(retryAfterSeconds("soon", NOW)).toBeUndefined();
    expect(retryAfterSeconds(null, NOW)).toBeUndefined();
  });

  it("insufficientScope: the scope of an insufficient_scope challenge only", () => {
    const challenge = 'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"';
    expect(insufficientScope(challenge)).toBe("pets:write");
    expect(insufficientScope('Bearer realm="petstore", error="invalid_token"')).toBeUndefined();
    expect(insufficientScope(null)).toBeUndefined();
  });
});

describe("PetStoreError", () => {
  it("reads Retry-After of a 429 and a 503 only", () => {
    expect(new PetStoreError(answer(429, { "Retry-After": "60" }), {}).retryAfter).toBe(60);
    expect(new PetStoreError(answer(503, { "Retry-After": "5" }), {}).retryAfter).toBe(5);
    expect(new PetStoreError(answer(400, { "Retry-After": "5" }), {}).retryAfter).toBeUndefined();
  });

  it("an answer that is not an Error object (a proxy's page): unexpected_response, the status", () => {
    const page = new Response("<html>Bad gateway</html>", { status: 502 });
    const error = new PetStoreError(page, "<html>Bad gateway</html>");
    expect(error).toMatchObject({ code: "unexpected_response", status: 502, details: [] });
    expect(error.message).toContain("502");
  });
});

describe("retryDelay", () => {
  it("waits what Retry-After asks, up to maxDelayMs; past it, not at all", () => {
    expect(retryDelay(1, answer(503, { "Retry-After": "5" }), {}, NOW)).toBe(5_000);
    expect(retryDelay(1, answer(429, { "Retry-After": "60" }), {}, NOW)).toBe(60_000);
    expect(retryDelay(1, answer(429, { "Retry-After": "61" }), {}, NOW)).toBeUndefined();
    const short = { maxDelayMs: 4_000 };
    expect(retryDelay(1, answer(503, { "Retry-After": "5" }), short, NOW)).toBeUndefined();
  });

  it("backs off exponentially with jitter, capped, when nothing says how long", () => {
    const options = { baseDelayMs: 100, maxDelayMs: 300, retries: 5 };
    for (const [retry, full] of [
      [1, 100],
      [2, 200],
      [3, 300],
      [4, 300],
    ] as const) {
      for (const response of [undefined, answer(503)]) {
        const wait = retryDelay(retry, response, options, NOW);
        expect(wait).toBeGreaterThanOrEqual(full / 2);
        expect(wait).toBeLessThanOrEqual(full);
      }
    }
  });

  it("never retries another status, nor more than `retries` times", () => {
    for (const status of [400, 401, 403, 404, 409, 422, 500, 501, 200, 201]) {
      expect(retryDelay(1, answer(status, { "Retry-After": "1" }), {}, NOW)).toBeUndefined();
    }
    expect(retryDelay(2, undefined, { retries: 2 }, NOW)).toBeGreaterThan(0);
    expect(retryDelay(3, undefined, { retries: 2 }, NOW)).toBeUndefined();
    expect(retryDelay(1, undefined, { retries: 0 }, NOW)).toBeUndefined();
  });
});

describe("retrying", () => {
  const FAST = { baseDelayMs: 1 };

  /** A send that answers from `script` in turn (an Error is thrown) and records each request. */
  function scripted(...script: Array<Response | Error>) {
    const sent: Request[] = [];
    const send = async (request: Request) => {
      sent.push(request);
      const next = script.shift();
      if (!next) throw new Error("the script has no more answers");
      if (next instanceof Error) throw next;
      return next;
    };
    return { sent, send };
  }

  const create = (headers: Record<string, string> = { "Idempotency-Key": "k-1" }) =>
    new Request("https://api.example/v1/pets", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });

  it("retries a create with its key after a network error, a 429 and a 503: same key, same body", async () => {
    const { sent, send } = scripted(
      new TypeError("fetch failed"),
      answer(429, { "Retry-After": "0" }),
      answer(503),
      answer(201),
    );
    const response = await retrying(send, { ...FAST, retries: 3 })(create());
    expect(response.status).toBe(201);
    expect(sent.map((r) => r.headers.get("Idempotency-Key"))).toEqual(["k-1", "k-1", "k-1", "k-1"]);
    for (const request of sent)
      expect(await request.json()).toEqual({ name: "Rex", categoryId: 1 });
  });

  it("returns the last transient answer once the retries are spent", async () => {
    const { sent, send } = scripted(answer(503), answer(503), answer(503));
    const response = await retrying(send, FAST)(create());
    expect(response.status).toBe(503);
    expect(sent).toHaveLength(3);
  });

  it("throws the network error once the retries are spent", async () => {
    const { sent, send } = scripted(new TypeError("offline"), new TypeError("still offline"));
    await expect(retrying(send, { ...FAST, retries: 1 })(create())).rejects.toThrow(
      "still offline",
    );
    expect(sent).toHaveLength(2);
  });

  it("never repeats a write without an Idempotency-Key, nor a 4xx", async () => {
    const lost = scripted(new TypeError("fetch failed"), answer(201));
    await expect(retrying(lost.send, FAST)(create({}))).rejects.toThrow("fetch failed");
    expect(lost.sent).toHaveLength(1);
    const refused = scripted(answer(409, { "Retry-After": "1" }), answer(201));
    expect((await retrying(refused.send, FAST)(create())).status).toBe(409);
    expect(refused.sent).toHaveLength(1);
  });

  it("retries a read; an abort during the wait ends it with the abort's reason", async () => {
    const read = scripted(answer(503), answer(200));
    expect(
      (await retrying(read.send, FAST)(new Request("https://api.example/v1/pets"))).status,
    ).toBe(200);
    expect(read.sent).toHaveLength(2);
    const controller = new AbortController();
    const waiting = scripted(answer(429, { "Retry-After": "5" }), answer(200));
    const request = new Request("https://api.example/v1/pets", { signal: controller.signal });
    const pending = retrying(waiting.send)(request);
    setTimeout(() => controller.abort(new Error("the caller gave up")), 10);
    await expect(pending).rejects.toThrow("the caller gave up");
    expect(waiting.sent).toHaveLength(1);
  });
});
