// The document walked: every path of the served OpenAPI document with every method, and
// every status each operation documents, provoked; each response goes through call()'s
// conformance check (test/support/conformance.ts). A documented status no provoker below
// responses fails the walk unless UNPROVOKABLE names it with a reason: a new path, method or
// status is walked without editing this file.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { SCOPES, type Scope } from "../src/scopes.ts";
import {
  type CallOptions,
  call,
  createCheckedApp,
  createKey,
  insertPet,
  makeRequest,
  throwingDb,
} from "./helpers.ts";
import { doc, exampleBody, type OperationObject as Operation } from "./support/conformance.ts";
import { NO_EDGE_CACHE } from "./support/instrumented-app.ts";

/** Statuses no walk can provoke from outside, and where they are tested instead. */
const UNPROVOKABLE: Record<string, string> = {
  "500 public": "public operations touch no binding that could fail",
};

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

let key: string;

beforeAll(async () => {
  ({ key } = await createKey("walk"));
});

/**
 * The path with its parameters filled: `values`, else a pet of its own, made for this one
 * request (a request may change or remove it).
 */
async function concrete(template: string, values: Record<string, string> = {}): Promise<string> {
  const petId = template.includes("{") ? String((await insertPet()).id) : "";
  return `/v1${template.replaceAll(/\{(\w+)\}/g, (_, name: string) => values[name] ?? petId)}`;
}

/** The scope an operation's security requirement names, if any. */
function scopeOf(op: Operation): Scope | undefined {
  return op.security[0]?.bearerAuth?.[0] as Scope | undefined;
}

interface Walk {
  template: string;
  method: string;
  op: Operation;
}

/** Sends a request through the worker (call) with the walk's path and method (and example body). */
const send = async (walk: Walk, options: CallOptions & { path?: string } = {}) =>
  call(options.path ?? (await concrete(walk.template)), {
    method: walk.method,
    key,
    ...(walk.op.requestBody && options.json === undefined && options.body === undefined
      ? { json: exampleBody(walk.op) }
      : {}),
    ...options,
  });

/** Sends it through the app factory with other bindings or another clock. */
async function sendVia(
  walk: Walk,
  appOptions: Parameters<typeof createCheckedApp>[0],
  appEnv: Env,
) {
  return createCheckedApp({ log: () => {}, ...appOptions }).fetch(
    makeRequest(await concrete(walk.template), {
      method: walk.method,
      key,
      ...(walk.op.requestBody ? { json: exampleBody(walk.op) } : {}),
    }),
    appEnv,
  );
}

/** Through the app factory over a D1 that throws `message`, no cache responding for it. */
async function withFailingDb(walk: Walk, message: string) {
  if (!scopeOf(walk.op)) return undefined;
  const nothingCached = { keyCache: () => NO_EDGE_CACHE, edgeCache: () => NO_EDGE_CACHE };
  return sendVia(walk, nothingCached, { ...env, DB: throwingDb(message) });
}

/** By status: one request that should provoke it, or undefined when it does not apply. */
const PROVOKE: Record<string, (walk: Walk) => Promise<Response | undefined>> = {
  "200": (walk) => send(walk),
  "201": (walk) => send(walk),
  "204": (walk) => send(walk),
  async "304"(walk) {
    const first = await send(walk, { method: "GET" });
    const etag = first.headers.get("ETag");
    await first.body?.cancel();
    return etag ? send(walk, { headers: { "If-None-Match": etag } }) : undefined;
  },
  async "400"(walk) {
    if (walk.op.requestBody) {
      return send(walk, { headers: { "Content-Type": "application/json" }, body: "{" });
    }
    const parameter = walk.op.parameters?.find((p) => p.in !== "header");
    // Else a header parameter longer than its documented limit.
    const header = walk.op.parameters?.find((p) => typeof p.schema.maxLength === "number");
    if (!parameter && header) {
      const long = "x".repeat((header.schema.maxLength as number) + 1);
      return send(walk, { headers: { [header.name]: long } });
    }
    if (!parameter) return undefined;
    if (parameter.in === "path") {
      return send(walk, { path: await concrete(walk.template, { [parameter.name]: "abc" }) });
    }
    return send(walk, { path: `${await concrete(walk.template)}?${parameter.name}=abc` });
  },
  "401": (walk) => send(walk, { key: null }),
  async "403"(walk) {
    const scope = scopeOf(walk.op);
    if (!scope) return undefined;
    const { key: lacking } = await createKey("walk-lacking", {
      scopes: SCOPES.filter((s) => s !== scope),
    });
    return send(walk, { key: lacking, ...(walk.op.requestBody ? { json: {} } : {}) });
  },
  async "404"(walk) {
    const parameter = walk.op.parameters?.find((p) => p.in === "path");
    if (!parameter) return undefined;
    const missing = String(parameter.schema.maximum ?? "999999999");
    return send(walk, { path: await concrete(walk.template, { [parameter.name]: missing }) });
  },
  async "409"(walk) {
    // A refused transition: a sold pet, offered any other status.
    const { id } = await insertPet({ status: "sold" });
    const path = await concrete(walk.template, { petId: String(id) });
    return send(walk, { path, json: { status: "available" } });
  },
  "412": (walk) => send(walk, { headers: { "If-Match": '"not-the-tag"' } }),
  async "410"(walk) {
    if (!walk.op.deprecated) return undefined;
    return sendVia(walk, { clock: () => Date.UTC(2100, 0, 1) }, env);
  },
  async "413"(walk) {
    if (!walk.op.requestBody) return undefined;
    return send(walk, { json: { ...exampleBody(walk.op), pad: "x".repeat(17_000) } });
  },
  async "415"(walk) {
    if (!walk.op.requestBody) return undefined;
    const body = JSON.stringify(exampleBody(walk.op));
    return send(walk, { headers: { "Content-Type": "text/plain" }, body });
  },
  async "422"(walk) {
    if (!walk.op.parameters?.some((p) => p.name === "Idempotency-Key")) return undefined;
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const first = await send(walk, { headers, json: exampleBody(walk.op) });
    await first.body?.cancel();
    return send(walk, { headers, json: { ...exampleBody(walk.op), categoryId: 99 } });
  },
  async "429"(walk) {
    if (!scopeOf(walk.op)) return undefined;
    const limiter = { limit: async () => ({ success: false }) };
    return sendVia(walk, {}, { ...env, RATE_LIMITER: limiter } as Env);
  },
  "500": (walk) => withFailingDb(walk, "D1_ERROR: no such table: api_keys"),
  "501": (walk) => send(walk),
  "503": (walk) => withFailingDb(walk, "D1_ERROR: Network connection lost."),
};

describe("the served document, walked", () => {
  it("every documented path responds to every method: its operations, OPTIONS with Allow, else 405", async () => {
    for (const [template, item] of Object.entries(doc.paths)) {
      const allow = [...Object.keys(item).map((m) => m.toUpperCase()), "OPTIONS"].join(", ");
      for (const method of METHODS) {
        const op = item[method.toLowerCase()];
        const response = await call(await concrete(template), {
          method,
          key,
          ...(op?.requestBody ? { json: exampleBody(op) } : {}),
        });
        const where = `${method} ${template}`;
        if (op) {
          expect(Object.keys(op.responses), where).toContain(String(response.status));
        } else {
          // OPTIONS: 204 with Allow; a method the path lacks: 405 with Allow.
          const status = method === "OPTIONS" ? 204 : 405;
          expect([response.status, response.headers.get("Allow")], where).toEqual([status, allow]);
        }
        await response.body?.cancel();
      }
    }
  });

  it("provokes every status each operation documents, and each response conforms", async () => {
    const missed: string[] = [];
    let provoked = 0;
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const walk = { template, method: method.toUpperCase(), op };
        for (const status of Object.keys(op.responses)) {
          const why =
            UNPROVOKABLE[status] ?? (op.security.length === 0 && UNPROVOKABLE[`${status} public`]);
          const response = await PROVOKE[status]?.(walk);
          if (response === undefined) {
            if (!why) missed.push(`${walk.method} ${template} ${status}`);
            continue;
          }
          // call() and createCheckedApp() checked it against the document already.
          expect(response.status, `${walk.method} ${template}: wanted ${status}`).toBe(
            Number(status),
          );
          await response.body?.cancel();
          provoked++;
        }
      }
    }
    expect(missed, "documented statuses the walk cannot provoke").toEqual([]);
    expect(provoked).toBeGreaterThan(60);
  });
});
