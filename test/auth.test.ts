// Authentication comes first under /v1: the shared no-key / wrong-key / wrong-scope
// test runs against every operation, and against the 404/405 answers it must precede.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { keyFormat, tagSecrets } from "../src/auth/key-format.ts";
import {
  issueApiKey,
  LOCAL_DEV_KEY,
  LOCAL_KEY_TAG_SECRET,
  untaggedApiKey,
} from "../src/auth/keys.ts";
import { SCOPES } from "../src/auth/scopes.ts";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { call, createKey, expectError, revokeKey, unknownKey, verifyContext } from "./helpers.ts";

const REALM = 'Bearer realm="petstore"';
const INVALID = 'Bearer realm="petstore", error="invalid_token"';

/**
 * `scope`: what the operation needs. A key with every other scope gets 403 naming it;
 * null where no scope applies (an unknown path is 404, a wrong method 405, whatever
 * the key's scopes).
 */
const OPERATIONS = [
  { name: "listPets", method: "GET", path: "/v1/pets?limit=5", scope: "pets:read" },
  {
    name: "createPet",
    method: "POST",
    path: "/v1/pets",
    json: { name: "Rex", categoryId: 1 },
    scope: "pets:write",
  },
  { name: "getPet", method: "GET", path: "/v1/pets/1", scope: "pets:read" },
  { name: "listOrders", method: "GET", path: "/v1/store/orders", scope: "orders:read" },
  // Auth precedes every other answer: invalid input, unknown paths, wrong methods.
  {
    name: "createPet with a bad body",
    method: "POST",
    path: "/v1/pets",
    json: { nope: 1 },
    scope: "pets:write",
  },
  { name: "getPet with a bad id", method: "GET", path: "/v1/pets/abc", scope: "pets:read" },
  { name: "an unknown path", method: "GET", path: "/v1/cats", scope: null },
  { name: "a wrong method", method: "DELETE", path: "/v1/pets/1", scope: null },
] as const;

describe.each(OPERATIONS)("$name ($method $path)", (op) => {
  const options = { method: op.method, json: "json" in op ? op.json : undefined };

  it("answers 401 without a key, with WWW-Authenticate and no deprecation headers", async () => {
    const response = await call(op.path, options);
    await expectError(response, 401, "unauthorized", /Authorization: Bearer/);
    expect(response.headers.get("WWW-Authenticate")).toBe(REALM);
    expect(response.headers.get("Deprecation")).toBeNull();
  });

  it("answers 401 invalid_token for a key that does not exist", async () => {
    const response = await call(op.path, { ...options, key: await unknownKey() });
    await expectError(response, 401, "unauthorized", /invalid or revoked/);
    expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
  });

  it(
    op.scope
      ? `answers 403 insufficient_scope naming ${op.scope} to a key without it`
      : "answers a key without any one scope as it answers every key (no 403)",
    async () => {
      const scopes = op.scope ? SCOPES.filter((s) => s !== op.scope) : ["orders:read" as const];
      const { key } = await createKey(`lacks ${op.scope ?? "nothing"}`, { scopes: [...scopes] });
      const response = await call(op.path, { ...options, key });
      if (!op.scope) {
        const status = op.method === "DELETE" ? 405 : 404;
        await expectError(response, status, status === 405 ? "method_not_allowed" : "not_found");
        expect(response.headers.get("WWW-Authenticate")).toBeNull();
        return;
      }
      await expectError(response, 403, "insufficient_scope", new RegExp(`"${op.scope}"`));
      expect(response.headers.get("WWW-Authenticate")).toBe(
        `${REALM}, error="insufficient_scope", scope="${op.scope}"`,
      );
    },
  );
});

describe("the Authorization header", () => {
  it("accepts the scheme name in any case", async () => {
    const { key } = await createKey();
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const response = await call("/v1/pets?limit=1", {
        headers: { Authorization: `${scheme} ${key}` },
      });
      expect(response.status).toBe(200);
      expect(Array.isArray(await response.json())).toBe(true);
    }
  });

  it("refuses other schemes without error=invalid_token", async () => {
    const response = await call("/v1/pets", { headers: { Authorization: "Basic dXNlcjpwYXNz" } });
    await expectError(response, 401, "unauthorized", /Bearer scheme/);
    expect(response.headers.get("WWW-Authenticate")).toBe(REALM);
  });

  it("refuses a malformed bearer token as invalid_token", async () => {
    const response = await call("/v1/pets", { headers: { Authorization: "Bearer a b c" } });
    await expectError(response, 401, "unauthorized", /malformed/);
    expect(response.headers.get("WWW-Authenticate")).toBe(INVALID);
  });

  it("refuses an empty header and a bare scheme", async () => {
    for (const value of ["", "Bearer", "Bearer "]) {
      const response = await call("/v1/pets", { headers: { Authorization: value } });
      await expectError(response, 401, "unauthorized");
      expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="petstore"/);
    }
  });

  it("refuses a revoked key", async () => {
    const { key, id } = await createKey();
    // A fresh verifier (a new isolate) has no cached entry: revocation is immediate there.
    expect(await revokeKey(id)).toBe(true);
    const verifier = createApiKeyVerifier(() => Date.now());
    expect(await verifier.verify(key, verifyContext(env))).toEqual({
      ok: false,
      reason: "unknown",
    });
  });
});

describe("the local development key", () => {
  it("is refused outside the local environment even if its hash were in the database", async () => {
    const verifier = createApiKeyVerifier(() => Date.now());
    for (const ENVIRONMENT of ["production", "staging"]) {
      expect(await verifier.verify(LOCAL_DEV_KEY, verifyContext({ ...env, ENVIRONMENT }))).toEqual({
        ok: false,
        reason: "unknown",
      });
    }
  });

  it("is not in the test database (only `npm run dev` seeds it, locally)", async () => {
    const response = await call("/v1/pets", { key: LOCAL_DEV_KEY });
    await expectError(response, 401, "unauthorized");
  });
});

describe("issued keys", () => {
  it("carry the psk_ prefix, 256 random bits and a 128-bit tag", async () => {
    const keys = new Set(
      await Promise.all(Array.from({ length: 200 }, () => issueApiKey(LOCAL_KEY_TAG_SECRET))),
    );
    expect(keys.size).toBe(200);
    // 43 characters of 32 random bytes, then 22 of the 16-byte tag.
    for (const key of keys) expect(key).toMatch(/^psk_[A-Za-z0-9_-]{43}[A-Za-z0-9_-]{22}$/);
    const randomParts = new Set([...keys].map((k) => k.slice(4, 47)));
    expect(randomParts.size).toBe(200);
  });

  it("keys issued before tags (psk_ + 43 characters) keep working", async () => {
    const { key, id } = await createKey("untagged", { untagged: true });
    expect(key).toMatch(/^psk_[A-Za-z0-9_-]{43}$/);
    expect(untaggedApiKey()).toMatch(/^psk_[A-Za-z0-9_-]{43}$/);
    const response = await call("/v1/pets?limit=1", { key });
    expect(response.status, await response.clone().text()).toBe(200);
    const verifier = createApiKeyVerifier(() => Date.now());
    expect(await verifier.verify(key, verifyContext(env))).toMatchObject({
      ok: true,
      key: { id },
    });
  });

  it("are stored only as SHA-256 hashes", async () => {
    const { key, id } = await createKey();
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?1").bind(id).first();
    expect(row?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(key.slice(4));
  });
});

describe("the key tag and its secret", () => {
  it("a tag made with the current or the previous secret passes; any other is invalid", async () => {
    const secrets = ["current secret", "previous secret"];
    for (const secret of secrets) {
      expect(await keyFormat(await issueApiKey(secret), secrets, "production")).toBe("tagged");
    }
    expect(await keyFormat(await issueApiKey("another"), secrets, "production")).toBe("invalid");
    // One character of the random part changed: the tag no longer matches it.
    const key = await issueApiKey("current secret");
    const altered = `${key.slice(0, 10)}${key[10] === "A" ? "B" : "A"}${key.slice(11)}`;
    expect(await keyFormat(altered, secrets, "production")).toBe("invalid");
    expect(await keyFormat(`${key}x`, secrets, "production")).toBe("invalid");
    expect(await keyFormat(key.slice(0, -1), secrets, "production")).toBe("invalid");
  });

  it("keys from before tags and local-dev-key (locally) need no tag; nothing else passes", async () => {
    expect(await keyFormat(untaggedApiKey(), ["s"], "production")).toBe("untagged");
    expect(await keyFormat(LOCAL_DEV_KEY, ["s"], "local")).toBe("local-dev");
    expect(await keyFormat(LOCAL_DEV_KEY, ["s"], "staging")).toBe("invalid");
    for (const token of ["", "psk_", "psk_short", "Bearer", `psk_${"a".repeat(44)}`]) {
      expect(await keyFormat(token, ["s"], "local"), token).toBe("invalid");
    }
  });

  it("reads the secret (and the previous one) from the environment; locally a public one", () => {
    const base = { ...env, ENVIRONMENT: "production" } as Env;
    expect(tagSecrets({ ...base, API_KEY_TAG_SECRET: "a" })).toEqual(["a"]);
    expect(
      tagSecrets({ ...base, API_KEY_TAG_SECRET: "a", API_KEY_TAG_SECRET_PREVIOUS: "b" } as Env),
    ).toEqual(["a", "b"]);
    expect(tagSecrets({ ...env, ENVIRONMENT: "local" } as Env)).toEqual([LOCAL_KEY_TAG_SECRET]);
    // A deployed environment without one (wrangler refuses to deploy so): no tag can be
    // checked, so a tagged key is treated like one from before tags (replica only).
    expect(tagSecrets(base)).toEqual([]);
  });

  it("without a secret, a deployed environment still accepts its keys, from a replica only", async () => {
    const { key, id } = await createKey("no-secret");
    expect(await keyFormat(key, [], "production")).toBe("untagged");
    const production = { ...env, ENVIRONMENT: "production" } as Env;
    const verifier = createApiKeyVerifier(() => Date.now());
    expect(await verifier.verify(key, verifyContext(production))).toMatchObject({
      ok: true,
      key: { id },
    });
  });
});
