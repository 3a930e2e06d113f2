// Authentication: the Authorization header, local-dev-key, key formats and tags. Its
// place first under /v1, on every operation: scopes.test.ts.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedLocalDevKeyStatement } from "../scripts/key-statements.ts";
import {
  hashApiKey,
  issueApiKey,
  KEY_PREFIX,
  keyFormat,
  LOCAL_DEV_KEY,
  LOCAL_KEY_TAG_SECRET,
  tagSecrets,
} from "../src/auth/keys.ts";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { call, createKey, expectError, verifyContext } from "./helpers.ts";

// The header with "Bearer" in any case and the key is accepted: property.test.ts.
it.each([
  ["Basic dXNlcjpwYXNz", /Bearer scheme/, 'Bearer realm="petstore"'],
  ["Bearer a b c", /malformed/, 'Bearer realm="petstore", error="invalid_token"'],
  ["", undefined, undefined],
  ["Bearer", undefined, undefined],
  ["Bearer ", undefined, undefined],
])("the Authorization header %j is refused with 401", async (value, message, challenge) => {
  const response = await call("/v1/pets", { headers: { Authorization: value } });
  await expectError(response, 401, "unauthorized", message);
  if (challenge) expect(response.headers.get("WWW-Authenticate")).toBe(challenge);
  else expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="petstore"/);
});

it("local-dev-key: only `npm run dev` seeds it, with every scope, and only the local environment takes it", async () => {
  const hash = await hashApiKey(LOCAL_DEV_KEY);
  const rows = () =>
    env.DB.prepare("SELECT scopes, expires_at, revoked_at FROM api_keys WHERE key_hash = ?1")
      .bind(hash)
      .all();
  expect((await rows()).results).toEqual([]);
  const seedIt = () => env.DB.prepare(seedLocalDevKeyStatement(hash)).run();
  await seedIt();
  // Restricted, expired and revoked since: the next seed restores it.
  await env.DB.prepare(
    "UPDATE api_keys SET scopes = 'pets:read', expires_at = 1, revoked_at = 1 WHERE key_hash = ?1",
  )
    .bind(hash)
    .run();
  await seedIt();
  expect((await rows()).results).toEqual([
    { scopes: "pets:read pets:write orders:read", expires_at: null, revoked_at: null },
  ]);
  // ENVIRONMENT is "local" in the tests: the seeded key works on every operation...
  const json = { name: "Dev", categoryId: 1 };
  const created = await call("/v1/pets", { method: "POST", key: LOCAL_DEV_KEY, json });
  expect(created.status).toBe(201);
  await created.body?.cancel();
  // ...and a deployed environment refuses it though its hash is in the database.
  const verifier = createApiKeyVerifier(() => Date.now());
  for (const ENVIRONMENT of ["production", "staging"]) {
    const context = verifyContext({ ...env, ENVIRONMENT });
    expect(await verifier.verify(LOCAL_DEV_KEY, context)).toEqual({ ok: false, reason: "unknown" });
  }
  await env.DB.prepare("DELETE FROM api_keys WHERE key_hash = ?1").bind(hash).run();
});

it("issued keys carry the psk_ prefix, 256 random bits and a 128-bit tag", async () => {
  const keys = new Set(
    await Promise.all(Array.from({ length: 200 }, () => issueApiKey(LOCAL_KEY_TAG_SECRET))),
  );
  expect(keys.size).toBe(200);
  // 43 characters of 32 random bytes, then 22 of the 16-byte tag.
  for (const key of keys) expect(key).toMatch(/^psk_[A-Za-z0-9_-]{43}[A-Za-z0-9_-]{22}$/);
  const randomParts = new Set([...keys].map((k) => k.slice(4, 47)));
  expect(randomParts.size).toBe(200);
});

it("a token in the untagged format of earlier builds (psk_ + 43 characters) is refused like any other string", async () => {
  // Stored as a key would be, so only its format can refuse it.
  const untagged = `${KEY_PREFIX}${"x".repeat(43)}`;
  const { key } = await createKey("cut");
  for (const token of [untagged, key.slice(0, 47)]) {
    await env.DB.prepare(
      "INSERT INTO api_keys (key_hash, prefix, label, created_at) VALUES (?1, 'psk_xx', 'old', 0)",
    )
      .bind(await hashApiKey(token))
      .run();
    const response = await call("/v1/pets?limit=1", { key: token });
    await expectError(response, 401, "unauthorized", /invalid or revoked/);
    expect(response.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="petstore", error="invalid_token"',
    );
  }
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

  it("local-dev-key (locally) needs no tag; nothing else without a valid tag passes", async () => {
    expect(await keyFormat(LOCAL_DEV_KEY, ["s"], "local")).toBe("unchecked");
    expect(await keyFormat(LOCAL_DEV_KEY, ["s"], "staging")).toBe("invalid");
    const tokens = [
      "",
      "psk_",
      "psk_short",
      "Bearer",
      `psk_${"a".repeat(43)}`,
      `psk_${"a".repeat(64)}`,
    ];
    for (const token of tokens) {
      expect(await keyFormat(token, ["s"], "local"), token).toBe("invalid");
    }
  });

  it("reads the secret (and the previous one) from the environment; locally a public one", () => {
    const production = { ENVIRONMENT: "production" };
    expect(tagSecrets({ ...production, API_KEY_TAG_SECRET: "a" })).toEqual(["a"]);
    expect(
      tagSecrets({ ...production, API_KEY_TAG_SECRET: "a", API_KEY_TAG_SECRET_PREVIOUS: "b" }),
    ).toEqual(["a", "b"]);
    expect(tagSecrets({ ENVIRONMENT: "local" })).toEqual([LOCAL_KEY_TAG_SECRET]);
    expect(tagSecrets({ ENVIRONMENT: "local", API_KEY_TAG_SECRET: "a" })).toEqual(["a"]);
    // A deployed environment without one (wrangler refuses to deploy so): no tag can be
    // checked; a previous secret alone is not one to issue keys with.
    expect(tagSecrets(production)).toEqual([]);
    expect(tagSecrets({ ...production, API_KEY_TAG_SECRET_PREVIOUS: "b" })).toEqual([]);
  });

  it("without a secret, a deployed environment still accepts its keys, from a replica only", async () => {
    const { key, id } = await createKey("no-secret");
    expect(await keyFormat(key, [], "production")).toBe("unchecked");
    const production = { ...env, ENVIRONMENT: "production" } as Env;
    const verifier = createApiKeyVerifier(() => Date.now());
    expect(await verifier.verify(key, verifyContext(production))).toMatchObject({
      ok: true,
      key: { id },
    });
  });
});
