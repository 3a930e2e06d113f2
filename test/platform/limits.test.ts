// The platform's limits, attacked (docs/platform.md, "Limits"): an IPv6 /64 is one client
// address; key creations and rotations per account and per client address per hour (across
// a deletion and a new sign-up); open challenges per address and per session; lists paged
// past 50 rows.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_KEY_CHANGES_PER_HOUR, OPEN_CHALLENGES } from "../../platform/src/config.ts";
import { purgeExpired } from "../../platform/src/db/purge.ts";
import { sha256Hex } from "../../src/encoding.ts";
import { addressBucket } from "../../src/http/client-address.ts";
import { SoftwareAuthenticator } from "./authenticator.ts";
import {
  type Call,
  count,
  expectError,
  freshAddress,
  movableClock,
  ORIGIN,
  platformWith,
  send,
  signUp,
} from "./helpers.ts";
import {
  allow,
  codeOf,
  openConsent,
  pkce,
  REDIRECT,
  RESOURCE,
  register,
  token,
} from "./oauth-client.ts";

const NOW = Date.parse("2026-11-24T15:30:00Z");
/** Rate-limit bindings that never refuse: what is under test here is another limit. */
const unlimited = { limit: async () => ({ success: true }) } as RateLimit;

describe("a client address", () => {
  it("30 sign-ups from one IPv6 /64 are cut off at the address's limit; another /64 passes", async () => {
    const [a, b, c] = Array.from(crypto.getRandomValues(new Uint16Array(3)), (n) => n.toString(16));
    const neighbour = (i: number) => `2001:db8:${a}:${b}:${i.toString(16)}::${c}`;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const begun = await send("/api/sign-up/options", {
        json: { displayName: "neighbour" },
        address: neighbour(i),
      });
      statuses.push(begun.status);
      if (begun.status === 429) await expectError(begun, 429, "rate_limited", /sign-ups/);
      else await begun.body?.cancel();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(env.TEST_PLATFORM_LIMIT);
    expect(statuses.slice(env.TEST_PLATFORM_LIMIT).every((s) => s === 429)).toBe(true);
    // The next /64 up is another customer's.
    const next = `2001:db8:${a}:${((Number.parseInt(b ?? "0", 16) + 1) % 0x10000).toString(16)}::${c}`;
    const other = await send("/api/sign-up/options", {
      json: { displayName: "other" },
      address: next,
    });
    expect(other.status).toBe(200);
  });
});

describe("keys made per account per hour", () => {
  it(`300 create+revoke cycles in 30 s are cut off after ${MAX_KEY_CHANGES_PER_HOUR}: 429 with Retry-After, a rotation too, and an hour later it may again`, async () => {
    const clock = movableClock(NOW);
    const fetch = platformWith({ clock });
    const { session, account } = await signUp({ fetch });
    const statuses: number[] = [];
    let firstRefusal: Response | undefined;
    let last = 0;
    for (let i = 0; i < 300; i++) {
      const made = await fetch("/api/keys", {
        json: { label: `cycle ${i}`, scopes: ["pets:read"] },
        session,
      });
      statuses.push(made.status);
      if (made.status === 201) {
        last = (await made.json<{ id: number }>()).id;
        expect((await fetch(`/api/keys/${last}/revoke`, { json: {}, session })).status).toBe(200);
      } else if (firstRefusal === undefined) firstRefusal = made;
      else await made.body?.cancel();
      clock.advance(0.1);
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_KEY_CHANGES_PER_HOUR);
    expect(statuses.slice(MAX_KEY_CHANGES_PER_HOUR).every((s) => s === 429)).toBe(true);
    expect(await count("api_keys", "account_id = ?1", account.id)).toBe(MAX_KEY_CHANGES_PER_HOUR);
    const refusal = firstRefusal as Response;
    await expectError(refusal, 429, "rate_limited", /create or rotate 20 keys an hour/);
    // The oldest key of the hour was made at NOW: it leaves the hour 3600 s later.
    expect(Number(refusal.headers.get("Retry-After"))).toBe(3600 - 2);

    // A rotation makes a key too: refused alike, and the old key stays as it was.
    await env.DB.prepare("UPDATE api_keys SET revoked_at = NULL WHERE id = ?1").bind(last).run();
    const rotate = () => fetch(`/api/keys/${last}/rotate`, { json: { graceSeconds: 0 }, session });
    await expectError(await rotate(), 429, "rate_limited", /an hour/);
    expect(await count("api_keys", "id = ?1 AND expires_at IS NULL", last)).toBe(1);

    clock.advance(3600);
    expect((await rotate()).status).toBe(201);
  }, 60_000);
});

describe("keys made per client address per hour", () => {
  it(`a deleted account's ${MAX_KEY_CHANGES_PER_HOUR} keys count for the next account of its address: a new sign-up makes none until the hour is past, by create, rotation or an MCP client's grant`, async () => {
    const clock = movableClock(NOW);
    const fetch = platformWith({ clock });
    const address = freshAddress();
    const bucket = addressBucket(address);
    const from = (session: string) => ({ session, address });
    const create = (session: string, call: Partial<Call> = { address }) =>
      fetch("/api/keys", { json: { label: "key", scopes: ["pets:read"] }, session, ...call });

    // The first account makes its hour's keys, revoking each, then is deleted.
    const first = await signUp({ fetch, address });
    for (let i = 0; i < MAX_KEY_CHANGES_PER_HOUR; i++) {
      const made = await create(first.session);
      expect(made.status).toBe(201);
      const { id } = await made.json<{ id: number }>();
      await fetch(`/api/keys/${id}/revoke`, { json: {}, ...from(first.session) });
      clock.advance(1);
    }
    await expectError(await create(first.session), 429, "rate_limited", /An account may/);
    const begun = await fetch("/api/account/delete/options", { json: {}, ...from(first.session) });
    const passkey = await first.authenticator.authenticate(await begun.json());
    const deleted = await fetch("/api/account/delete", {
      json: { passkey },
      ...from(first.session),
    });
    expect(deleted.status, await deleted.clone().text()).toBe(204);
    expect(await count("api_keys", "created_from = ?1", bucket)).toBe(MAX_KEY_CHANGES_PER_HOUR);

    // Signed up again from the same /64 (another address in it): still the same hour's count.
    const neighbour = `${bucket.split("::")[0]}::77`;
    const again = await signUp({ fetch, address: neighbour });
    const refused = await create(again.session, { address: neighbour });
    await expectError(refused, 429, "rate_limited", /from this address.*a deleted one too/);
    // The oldest of the deleted account's keys leaves the hour 3600 s after NOW.
    expect(Number(refused.headers.get("Retry-After"))).toBe(3600 - MAX_KEY_CHANGES_PER_HOUR);
    expect(await count("api_keys", "account_id = ?1", again.account.id)).toBe(0);

    // Another address makes a key for it; rotating it from the full address is refused too.
    const elsewhere = await create(again.session, { address: freshAddress() });
    expect(elsewhere.status).toBe(201);
    const { id } = await elsewhere.json<{ id: number }>();
    const rotate = () =>
      fetch(`/api/keys/${id}/rotate`, { json: { graceSeconds: 0 }, ...from(again.session) });
    await expectError(await rotate(), 429, "rate_limited", /from this address/);

    // An MCP client's grant: the holder's Allow from the full address is refused; the key an
    // Allow from elsewhere makes counts where that Allow came from.
    const clientId = await register({}, fetch);
    const consent = async () => {
      const { verifier, challenge } = await pkce();
      const { grantId } = await openConsent(
        { client_id: clientId, code_challenge: challenge },
        again.session,
        fetch,
      );
      return { grantId, verifier };
    };
    const blocked = await consent();
    await expectError(
      await allow(blocked.grantId, again.session, undefined, { address }, fetch),
      429,
      "rate_limited",
      /from this address/,
    );
    const other = freshAddress();
    const allowed = await consent();
    const { code } = await codeOf(
      await allow(allowed.grantId, again.session, undefined, { address: other }, fetch),
    );
    const redeemed = await token(
      {
        grant_type: "authorization_code",
        code,
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_verifier: allowed.verifier,
        resource: RESOURCE,
      },
      fetch,
    );
    expect(redeemed.status, await redeemed.clone().text()).toBe(200);
    expect(
      await count("api_keys", "created_from = ?1 AND audience = '/mcp'", addressBucket(other)),
    ).toBe(1);

    // Once the hour is past, the address makes keys again; the hourly purge then erases the
    // addresses of keys whose hour is past, and keeps the rest.
    clock.advance(3600);
    expect((await rotate()).status).toBe(201);
    const ours = [first.account.id, again.account.id];
    const kept = async () => ({
      keys: await count("api_keys", "created_from IS NOT NULL AND account_id IN (?1, ?2)", ...ours),
      grants: await count("oauth_grants", "allowed_from IS NOT NULL AND account_id = ?2", ...ours),
    });
    expect(await kept()).toEqual({ keys: MAX_KEY_CHANGES_PER_HOUR + 3, grants: 1 });
    await purgeExpired(env.DB, Math.floor(clock.now / 1000));
    expect(await kept()).toEqual({ keys: 1, grants: 0 });
    expect(await count("api_keys", "created_from = ?1", bucket)).toBe(1);
  }, 60_000);
});

describe("open challenges", () => {
  it(`an address holds at most ${OPEN_CHALLENGES.address} open sign-in challenges: a new one ends the oldest, which is then refused`, async () => {
    const clock = movableClock(NOW);
    const fetch = platformWith({ clock }, { SIGN_IN_LIMITER: unlimited });
    const { authenticator } = await signUp({ fetch });
    const address = freshAddress();
    const options: Array<{ challenge: string; rpId?: string }> = [];
    for (let i = 0; i < OPEN_CHALLENGES.address + 5; i++) {
      const begun = await fetch("/api/sign-in/options", { json: {}, address });
      expect(begun.status).toBe(200);
      options.push(await begun.json());
      clock.advance(1);
    }
    const holder = `address:${address.split("::")[0]}::/64`;
    expect(await count("challenges", "holder = ?1", holder)).toBe(OPEN_CHALLENGES.address);
    const statuses: number[] = [];
    for (const opened of options) {
      const done = await fetch("/api/sign-in", {
        json: await authenticator.authenticate(opened),
        address,
      });
      statuses.push(done.status);
      if (done.status === 400)
        await expectError(done, 400, "invalid_challenge", /expired or was already used/);
    }
    expect(statuses).toEqual([...Array(5).fill(400), ...Array(OPEN_CHALLENGES.address).fill(200)]);
    expect(await count("challenges", "holder = ?1", holder)).toBe(0);
  });

  it(`a session holds at most ${OPEN_CHALLENGES.session} open passkey challenges however often it asks`, async () => {
    const clock = movableClock(NOW);
    const fetch = platformWith({ clock });
    const { session } = await signUp({ fetch });
    const id = await env.DB.prepare("SELECT id FROM sessions WHERE token_hash = ?1")
      .bind(await sha256Hex(session))
      .first<string>("id");
    const holder = `session:${id}`;
    const options: Array<Parameters<SoftwareAuthenticator["register"]>[0]> = [];
    for (let i = 0; i < 25; i++) {
      const begun = await fetch("/api/passkeys/options", { json: {}, session });
      expect(begun.status).toBe(200);
      options.push(await begun.json());
      clock.advance(1);
    }
    expect(await count("challenges", "holder = ?1", holder)).toBe(OPEN_CHALLENGES.session);
    const add = async (opened: Parameters<SoftwareAuthenticator["register"]>[0]) =>
      fetch("/api/passkeys", {
        json: await (await SoftwareAuthenticator.create(ORIGIN)).register(opened),
        session,
      });
    await expectError(await add(options[21] as (typeof options)[0]), 400, "invalid_challenge");
    expect((await add(options[22] as (typeof options)[0])).status).toBe(201);
    expect(await count("challenges", "holder = ?1", holder)).toBe(OPEN_CHALLENGES.session - 1);
  });
});

describe("lists", () => {
  it("GET /api/keys pages past 50 keys, newest first, by Link rel=next; another account's keys never show", async () => {
    const { session, account } = await signUp();
    const stranger = await signUp();
    const insert = (accountId: string, i: number) =>
      env.DB.prepare(
        `INSERT INTO api_keys (account_id, key_hash, prefix, label, scopes, created_at, revoked_at)
         VALUES (?1, ?2, 'psk_paged', ?3, 'pets:read', unixepoch(), unixepoch())`,
      ).bind(accountId, `${accountId}-${String(i).padStart(3, "0")}`, `key ${i}`);
    await env.DB.batch([
      ...Array.from({ length: 55 }, (_, i) => insert(account.id, i)),
      insert(stranger.account.id, 0),
    ]);
    const first = await send("/api/keys", { session });
    expect(first.status).toBe(200);
    const page1 = await first.json<Array<{ id: number; label: string }>>();
    expect(page1).toHaveLength(50);
    expect(page1[0]?.label).toBe("key 54");
    const next = /^<(\/api\/keys\?before=\d+)>; rel="next"$/.exec(
      first.headers.get("Link") ?? "",
    )?.[1];
    expect(next).toBe(`/api/keys?before=${page1.at(-1)?.id}`);
    const second = await send(next as string, { session });
    const page2 = await second.json<Array<{ id: number; label: string }>>();
    expect(second.headers.get("Link")).toBeNull();
    expect(page2.map((k) => k.label)).toEqual(["key 4", "key 3", "key 2", "key 1", "key 0"]);
    const ids = [...page1, ...page2].map((k) => k.id);
    expect(new Set(ids).size).toBe(55);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const body = await expectError(
      await send("/api/keys?before=abc", { session }),
      400,
      "validation_failed",
      /"before"/,
    );
    expect(body.details).toEqual([{ field: "before", message: expect.stringMatching(/key id/) }]);
  });
});
