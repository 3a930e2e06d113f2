// Unit tests of the client package's logic that the worker cannot drive at will: the
// header formats it reads, the failure family, the waits between retries, which failures
// are retried and the time limits (a scripted fetch responds with 429, 502, 503 and 504 the way
// the contract and a gateway do, fails like a network, or never responds).
import { describe, expect, it } from "vitest";
import { PetStoreError } from "../../packages/client/src/errors.ts";
import {
  insufficientScope,
  linkTarget,
  retryAfterSeconds,
} from "../../packages/client/src/headers.ts";
import {
  afterLostResponse,
  retryDelay,
  type SendOptions,
  send,
} from "../../packages/client/src/retry.ts";

const NOW = Date.parse("2026-11-25T12:00:00Z");

/** A response of the API: an Error object for `status` with `headers`. */
function apiResponse(status: number, headers: Record<string, string> = {}): Response {
  const body = status < 300 ? {} : { code: "x", message: `status ${status}`, status };
  return Response.json(body, { status, headers });
}

describe("headers", () => {
  it("linkTarget: the target of rel=next (or another), whatever else the header holds", () => {
    const next = "https://api.example/v1/pets?limit=2&cursor=AbC-_9";
    expect(linkTarget(`<${next}>; rel="next"`)).toBe(next);
    expect(linkTarget(`</v1/pets>; rel="successor-version", <${next}>; rel=next`)).toBe(next);
    expect(linkTarget(`<${next}>; title="a; b"; rel="prev next"`)).toBe(next);
    expect(linkTarget('</v1/pets>; rel="successor-version", </v1/docs>; rel="deprecation"')).toBe(
      undefined,
    );
    expect(linkTarget(`<${next}>; rel="nextish"`)).toBeUndefined();
    expect(linkTarget(null)).toBeUndefined();
    const deprecated = '</v1/pets>; rel="successor-version", </v1/docs#getpet>; rel="deprecation"';
    expect(linkTarget(deprecated, "successor-version")).toBe("/v1/pets");
    expect(linkTarget(deprecated, "deprecation")).toBe("/v1/docs#getpet");
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
  const responded = (response: Response) =>
    new PetStoreError({ kind: "response", response, body: {}, attempts: 1 });

  it("reads Retry-After of the responses a retry can cure only", () => {
    expect(responded(apiResponse(429, { "Retry-After": "60" })).retryAfter).toBe(60);
    expect(responded(apiResponse(503, { "Retry-After": "5" })).retryAfter).toBe(5);
    expect(responded(apiResponse(502, { "Retry-After": "1" })).retryAfter).toBe(1);
    expect(responded(apiResponse(400, { "Retry-After": "5" })).retryAfter).toBeUndefined();
  });

  it("a response that is not an Error object (a proxy's page): unexpected_response, the status, the headers", () => {
    const page = new Response("<html>Bad gateway</html>", {
      status: 502,
      headers: { "X-Request-Id": "r-1", Server: "proxy" },
    });
    const error = new PetStoreError({
      kind: "response",
      response: page,
      body: "<html>",
      attempts: 3,
    });
    expect(error).toMatchObject({
      kind: "response",
      code: "unexpected_response",
      status: 502,
      details: [],
      requestId: "r-1",
      attempts: 3,
      idempotencyKey: undefined,
    });
    expect(error.headers.get("Server")).toBe("proxy");
    expect(error.message).toContain("502");
  });

  it("a failure without a response: its kind's code, no status, empty headers, the cause", () => {
    const cause = new TypeError("fetch failed");
    const error = new PetStoreError({
      kind: "network",
      attempts: 2,
      idempotencyKey: "k-1",
      cause,
      message: "No response",
    });
    expect(error).toMatchObject({ code: "network_error", status: undefined, attempts: 2 });
    expect(error).toMatchObject({ idempotencyKey: "k-1", requestId: undefined, cause });
    expect([...error.headers]).toEqual([]);
  });
});

describe("retryDelay", () => {
  it("waits what Retry-After asks, up to maxDelayMs; past it, not at all", () => {
    expect(retryDelay(1, apiResponse(503, { "Retry-After": "5" }), {}, NOW)).toBe(5_000);
    expect(retryDelay(1, apiResponse(429, { "Retry-After": "60" }), {}, NOW)).toBe(60_000);
    expect(retryDelay(1, apiResponse(429, { "Retry-After": "61" }), {}, NOW)).toBeUndefined();
    const short = { maxDelayMs: 4_000 };
    expect(retryDelay(1, apiResponse(503, { "Retry-After": "5" }), short, NOW)).toBeUndefined();
  });

  it("backs off exponentially with jitter, capped, when nothing says how long", () => {
    const options = { baseDelayMs: 100, maxDelayMs: 300, retries: 5 };
    for (const [retry, full] of [
      [1, 100],
      [2, 200],
      [3, 300],
      [4, 300],
    ] as const) {
      for (const response of [undefined, apiResponse(503)]) {
        const wait = retryDelay(retry, response, options, NOW);
        expect(wait).toBeGreaterThanOrEqual(full / 2);
        expect(wait).toBeLessThanOrEqual(full);
      }
    }
  });

  it("retries 429, 502, 503 and 504; never another status, nor more than `retries` times", () => {
    for (const status of [429, 502, 503, 504]) {
      expect(retryDelay(1, apiResponse(status, { "Retry-After": "1" }), {}, NOW)).toBe(1_000);
    }
    for (const status of [400, 401, 403, 404, 409, 422, 500, 501, 200, 201]) {
      expect(retryDelay(1, apiResponse(status, { "Retry-After": "1" }), {}, NOW)).toBeUndefined();
    }
    expect(retryDelay(2, undefined, { retries: 2 }, NOW)).toBeGreaterThan(0);
    expect(retryDelay(3, undefined, { retries: 2 }, NOW)).toBeUndefined();
    expect(retryDelay(1, undefined, { retries: 0 }, NOW)).toBeUndefined();
  });
});

describe("send", () => {
  const FAST: SendOptions = { retry: { baseDelayMs: 1 } };
  const READ = "https://api.example/v1/pets";

  /** A fetch that responds from `script` in turn (an Error is thrown) and records each request. */
  function scripted(...script: Array<Response | Error | "never">) {
    const sent: Request[] = [];
    const fetch = async (request: Request) => {
      sent.push(request);
      const next = script.shift();
      if (!next) throw new Error("the script has no more responses");
      if (next === "never") return new Promise<Response>(() => {}); // ignores the signal too
      if (next instanceof Error) throw next;
      return next;
    };
    return { sent, fetch };
  }

  const create = (headers: Record<string, string> = { "Idempotency-Key": "k-1" }) =>
    new Request(READ, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });

  /** The PetStoreError `call` rejects with. */
  async function failure(call: Promise<unknown>): Promise<PetStoreError> {
    const error = await call.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(PetStoreError);
    return error as PetStoreError;
  }

  it("retries a create with its key after a network error, a timeout, a 429, a 502, a 503 and a 504: same key, same body", async () => {
    const { sent, fetch } = scripted(
      new TypeError("fetch failed"),
      "never",
      apiResponse(429, { "Retry-After": "0" }),
      apiResponse(502),
      apiResponse(503),
      apiResponse(504),
      apiResponse(201),
    );
    const retry = { baseDelayMs: 1, retries: 6 };
    const response = await send(fetch, create(), { retry, attemptTimeoutMs: 50 });
    expect(response.status).toBe(201);
    expect(sent.map((r) => r.headers.get("Idempotency-Key"))).toEqual(Array(7).fill("k-1"));
    for (const request of sent)
      expect(await request.json()).toEqual({ name: "Rex", categoryId: 1 });
  });

  it("tells onRetry each retry: the attempt, the failure of the family, the wait", async () => {
    const { fetch } = scripted(
      new TypeError("reset"),
      apiResponse(503, { "Retry-After": "0" }),
      apiResponse(200),
    );
    const events: Array<[number, string, number | undefined, number]> = [];
    await send(fetch, new Request(READ), {
      ...FAST,
      onRetry: ({ attempt, error, delayMs, request }) => {
        expect(request.url).toBe(READ);
        events.push([attempt, error.code, error.status, delayMs]);
      },
    });
    expect(events).toEqual([
      [1, "network_error", undefined, expect.any(Number)],
      [2, "x", 503, 0],
    ]);
  });

  it("returns the last transient response once the retries are spent, with the attempts made", async () => {
    const { sent, fetch } = scripted(apiResponse(503), apiResponse(503), apiResponse(503));
    const response = await send(fetch, create(), FAST);
    expect(response.status).toBe(503);
    expect(sent).toHaveLength(3);
  });

  it("throws a network failure once the retries are spent: kind, attempts, key, cause", async () => {
    const lost = new TypeError("still offline");
    const { sent, fetch } = scripted(new TypeError("offline"), lost);
    const error = await failure(send(fetch, create(), { retry: { baseDelayMs: 1, retries: 1 } }));
    expect(error).toMatchObject({ kind: "network", code: "network_error", attempts: 2 });
    expect(error).toMatchObject({ idempotencyKey: "k-1", status: undefined, cause: lost });
    expect(sent).toHaveLength(2);
  });

  it("never repeats a write without an Idempotency-Key, nor a 4xx or a 500", async () => {
    const lost = scripted(new TypeError("fetch failed"), apiResponse(201));
    const error = await failure(send(lost.fetch, create({}), FAST));
    expect(error).toMatchObject({ kind: "network", attempts: 1, idempotencyKey: undefined });
    expect(lost.sent).toHaveLength(1);
    const gateway = scripted(apiResponse(502), apiResponse(201));
    expect((await send(gateway.fetch, create({}), FAST)).status).toBe(502);
    expect(gateway.sent).toHaveLength(1);
    for (const status of [409, 500]) {
      const refused = scripted(apiResponse(status, { "Retry-After": "1" }), apiResponse(201));
      expect((await send(refused.fetch, create(), FAST)).status).toBe(status);
      expect(refused.sent).toHaveLength(1);
    }
  });

  /** A change of pet 1: `method`, with these headers. */
  const change = (method: "PATCH" | "DELETE", headers: Record<string, string> = {}) =>
    new Request(`${READ}/1`, {
      method,
      headers,
      body: method === "PATCH" ? '{"status":"sold"}' : null,
    });
  const ifMatch = { "If-Match": '"t1"' };

  it("retries a removal (under If-Match too) and a merge patch after any transient failure; a patch under If-Match only after a 429", async () => {
    for (const request of [change("DELETE"), change("DELETE", ifMatch), change("PATCH")]) {
      const { sent, fetch } = scripted(
        new TypeError("reset"),
        "never",
        apiResponse(502),
        apiResponse(200),
      );
      const options = { retry: { baseDelayMs: 1, retries: 3 }, attemptTimeoutMs: 50 };
      expect((await send(fetch, request, options)).status).toBe(200);
      expect(sent).toHaveLength(4);
    }
    const patch = () => change("PATCH", ifMatch);
    const limited = scripted(apiResponse(429, { "Retry-After": "0" }), apiResponse(200));
    expect((await send(limited.fetch, patch(), FAST)).status).toBe(200);
    expect(limited.sent.map((request) => request.headers.get("If-Match"))).toEqual([
      '"t1"',
      '"t1"',
    ]);
    const lost = scripted(new TypeError("reset"), apiResponse(412));
    const error = await failure(send(lost.fetch, patch(), FAST));
    expect(error).toMatchObject({ kind: "network", attempts: 1 });
    expect(lost.sent).toHaveLength(1);
    const slow = scripted("never", apiResponse(412));
    const timedOut = await failure(send(slow.fetch, patch(), { ...FAST, attemptTimeoutMs: 30 }));
    expect(timedOut).toMatchObject({ kind: "timeout", attempts: 1 });
    for (const status of [502, 503, 504]) {
      const gateway = scripted(apiResponse(status, { "Retry-After": "0" }), apiResponse(412));
      expect((await send(gateway.fetch, patch(), FAST)).status).toBe(status);
      expect(gateway.sent).toHaveLength(1);
    }
  });

  it("afterLostResponse: an earlier attempt may have acted (no response, a timeout, a 502, 503, 504), not after a 429 alone", async () => {
    const options = { retry: { baseDelayMs: 1, retries: 3 }, attemptTimeoutMs: 30 };
    const lostBefore = async (...script: Array<Response | Error | "never">) => {
      const response = await send(
        scripted(...script, apiResponse(404)).fetch,
        change("DELETE"),
        options,
      );
      expect(response.status).toBe(404);
      return afterLostResponse(response);
    };
    expect(await lostBefore()).toBe(false);
    expect(await lostBefore(apiResponse(429, { "Retry-After": "0" }))).toBe(false);
    expect(
      await lostBefore(
        apiResponse(429, { "Retry-After": "0" }),
        apiResponse(429, { "Retry-After": "0" }),
      ),
    ).toBe(false);
    expect(await lostBefore(new TypeError("reset"))).toBe(true);
    expect(await lostBefore("never")).toBe(true);
    for (const status of [502, 503, 504]) expect(await lostBefore(apiResponse(status))).toBe(true);
    expect(await lostBefore(apiResponse(503), apiResponse(429, { "Retry-After": "0" }))).toBe(true);
  });

  it("an attempt past attemptTimeoutMs is a timeout, retried; the last one is thrown", async () => {
    const { sent, fetch } = scripted("never", "never", "never");
    const started = Date.now();
    const error = await failure(send(fetch, new Request(READ), { ...FAST, attemptTimeoutMs: 30 }));
    expect(error).toMatchObject({ kind: "timeout", code: "timeout", attempts: 3 });
    expect(error.message).toBe("The attempt's time limit ran out (attemptTimeoutMs: 30 ms)");
    expect(sent).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("a body that stalls is a timeout too", async () => {
    const stalled = new Response(new ReadableStream({ start() {} }), { status: 200 });
    const { fetch } = scripted(stalled);
    const options = { retry: { retries: 0 }, attemptTimeoutMs: 30 };
    const error = await failure(send(fetch, new Request(READ), options));
    expect(error).toMatchObject({ kind: "timeout", attempts: 1 });
  });

  it("the call's timeoutMs bounds attempts and waits: a Retry-After past it is returned at once", async () => {
    const slow = scripted("never");
    const started = Date.now();
    const error = await failure(send(slow.fetch, new Request(READ), { timeoutMs: 40 }));
    expect(error).toMatchObject({ kind: "timeout", attempts: 1 });
    expect(error.message).toBe("The call's time limit ran out (timeoutMs: 40 ms)");
    expect(Date.now() - started).toBeLessThan(1_000);
    // A first attempt failed, and the call's limit ran out in the second: the message names
    // that limit and its value, not the time that was left of it.
    const later = scripted(new TypeError("reset"), "never");
    const limits = { ...FAST, attemptTimeoutMs: 10_000, timeoutMs: 100 };
    const cut = await failure(send(later.fetch, new Request(READ), limits));
    expect(cut).toMatchObject({ kind: "timeout", attempts: 2 });
    expect(cut.message).toBe("The call's time limit ran out (timeoutMs: 100 ms)");

    const limited = scripted(apiResponse(429, { "Retry-After": "60" }), apiResponse(200));
    const response = await send(limited.fetch, new Request(READ), { timeoutMs: 30_000 });
    expect(response.status).toBe(429);
    expect(limited.sent).toHaveLength(1);
    const unavailable = scripted(apiResponse(503, { "Retry-After": "5" }), apiResponse(200));
    const shorter = await send(unavailable.fetch, new Request(READ), { timeoutMs: 4_000 });
    expect(shorter.status).toBe(503);
  });

  it("never follows a redirect: a 3xx is unexpected_response, where it points nothing is sent, never retried", async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      const location = "https://elsewhere.example/v1/pets";
      const { sent, fetch } = scripted(
        new Response(null, { status, headers: { Location: location } }),
        apiResponse(201),
      );
      const error = await failure(send(fetch, create(), FAST));
      expect(error).toMatchObject({ kind: "response", code: "unexpected_response", status });
      expect(error).toMatchObject({ attempts: 1, idempotencyKey: "k-1" });
      expect(error.message).toBe(`HTTP ${status}: a redirect to ${location}, not followed`);
      expect(error.headers.get("Location")).toBe(location);
      expect(sent.map((request) => [request.url, request.redirect])).toEqual([[READ, "manual"]]);
    }
    // A browser's fetch hides a redirect it did not follow: its status and headers too.
    const hidden = { type: "opaqueredirect", status: 0, headers: new Headers(), body: null };
    const browser = scripted(hidden as Response);
    const error = await failure(send(browser.fetch, new Request(READ), FAST));
    expect(error).toMatchObject({
      kind: "response",
      code: "unexpected_response",
      status: undefined,
    });
    expect(error.message).toBe("A redirect, not followed");
  });

  it("a 304 is a response to If-None-Match only", async () => {
    const conditional = new Request(READ, { headers: { "If-None-Match": '"a"' } });
    const responded = scripted(new Response(null, { status: 304 }));
    expect((await send(responded.fetch, conditional, FAST)).status).toBe(304);
    const unasked = scripted(new Response(null, { status: 304 }));
    const error = await failure(send(unasked.fetch, new Request(READ), FAST));
    expect(error).toMatchObject({ code: "unexpected_response", status: 304, attempts: 1 });
  });

  it("a JSON body cut short is a network failure, retried, with or without Content-Length", async () => {
    const json = { "Content-Type": "application/json" };
    const bytes = new TextEncoder().encode('{"id":1,"na');
    // Shorter than its Content-Length: fetch's body stream fails (undici: "terminated").
    const short = new ReadableStream({
      start(controller) {
        controller.enqueue(bytes);
        controller.error(new TypeError("terminated"));
      },
    });
    // Without Content-Length, the connection's close ends the body: fetch sees it whole.
    const closed = new Response(bytes, { headers: json });
    const { sent, fetch } = scripted(
      new Response(short, { headers: json }),
      closed,
      apiResponse(201),
    );
    const events: string[] = [];
    const onRetry = ({ error }: { error: PetStoreError }) =>
      events.push(`${error.kind} ${error.code}: ${error.message}`);
    const response = await send(fetch, create(), { ...FAST, onRetry });
    expect(response.status).toBe(201);
    expect(sent.map((request) => request.headers.get("Idempotency-Key"))).toEqual(
      Array(3).fill("k-1"),
    );
    expect(events).toEqual([
      "network network_error: The response was cut short: terminated",
      expect.stringMatching(/^network network_error: The response was cut short: \S/),
    ]);
    // Not JSON by its media type (a captive portal's page): the response, for the caller to judge.
    const portal = new Response("<html>Sign in", { headers: { "Content-Type": "text/html" } });
    expect(await (await send(scripted(portal).fetch, new Request(READ), FAST)).text()).toBe(
      "<html>Sign in",
    );
  });

  it("the caller's abort, during an attempt or a wait, is kind abort with the signal's reason", async () => {
    const during = new AbortController();
    const hanging = scripted("never");
    const pending = send(hanging.fetch, new Request(READ, { signal: during.signal }));
    setTimeout(() => during.abort(new Error("the caller gave up")), 10);
    const error = await failure(pending);
    expect(error).toMatchObject({ kind: "abort", code: "aborted", attempts: 1 });
    expect((error.cause as Error).message).toBe("the caller gave up");

    const controller = new AbortController();
    const waiting = scripted(apiResponse(429, { "Retry-After": "5" }), apiResponse(200));
    const request = new Request(READ, { signal: controller.signal });
    const waited = send(waiting.fetch, request);
    setTimeout(() => controller.abort(new Error("no more waiting")), 10);
    const aborted = await failure(waited);
    expect(aborted).toMatchObject({ kind: "abort", attempts: 1 });
    expect((aborted.cause as Error).message).toBe("no more waiting");
    expect(waiting.sent).toHaveLength(1);
  });
});
