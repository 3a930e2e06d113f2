// Developer platform accounts as the operator sees them, with the very statements
// `npm run accounts` sends (scripts/account-statements.ts; the CLI's grammar is
// test/node/accounts-cli.test.ts): the list, and a disabled account's keys, which the API
// refuses within the revocation bound, across every cache tier, until it is enabled.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  disableAccountStatements,
  enableAccountStatement,
  LIST_ACCOUNTS_STATEMENT,
  toListedAccount,
} from "../scripts/account-statements.ts";
import { AUTH_CACHE_TTL_MS, AUTH_UNKNOWN_TTL_MS } from "../src/config.ts";
import { createAccount, createKey, expectError, revokeKey } from "./helpers.ts";
import { instrumentedApp } from "./support/instrumented-app.ts";

afterEach(() => {
  vi.useRealTimers();
});

const run = (sql: string) => env.DB.prepare(sql).all<Record<string, unknown>>();
const now = () => Math.floor(Date.now() / 1000);

/** The account as `npm run accounts -- list` lists it. */
async function listed(accountId: string) {
  const { results } = await run(LIST_ACCOUNTS_STATEMENT);
  return results.map(toListedAccount).find((a) => a.id === accountId);
}

describe("accounts list", () => {
  it("shows each account with its name, times and active keys, in the order of list --json", async () => {
    const [active, revoked, expired] = await Promise.all([
      createKey("account-active"),
      createKey("account-revoked"),
      createKey("account-expired", { expiresAt: 1 }),
    ]);
    await revokeKey(revoked.id);
    const { accountId } = await createAccount([active.id, revoked.id, expired.id]);
    const account = await listed(accountId);
    expect(account).toEqual({
      id: accountId,
      displayName: "test account",
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
      disabledAt: null,
      activeKeys: 1,
    });
    expect(Object.keys(account ?? {}).join()).toBe(
      "id,displayName,createdAt,disabledAt,activeKeys",
    );
  });

  it("disable keeps the first instant; enable clears it; an unknown id returns no row", async () => {
    const { accountId } = await createAccount();
    const [first] = (await run(disableAccountStatements(accountId, 1_900_000_000)[0])).results;
    const [again] = (await run(disableAccountStatements(accountId, 1_900_000_500)[0])).results;
    expect(toListedAccount(first ?? {}).disabledAt).toBe("2030-03-17T17:46:40.000Z");
    expect(toListedAccount(again ?? {}).disabledAt).toBe("2030-03-17T17:46:40.000Z");
    expect((await listed(accountId))?.disabledAt).toBe("2030-03-17T17:46:40.000Z");
    const [enabled] = (await run(enableAccountStatement(accountId))).results;
    expect(toListedAccount(enabled ?? {}).disabledAt).toBeNull();
    const nobody = "acct_AAAAAAAAAAAAAAAAAAAAAA";
    expect((await run(enableAccountStatement(nobody))).results).toEqual([]);
    expect((await run(disableAccountStatements(nobody, now())[0])).results).toEqual([]);
  });
});

describe("a disabled account's keys", () => {
  const PAGE = "/v1/pets?limit=1";

  it(`are refused at most ${AUTH_CACHE_TTL_MS / 1000} s after the D1 read, by every tier together, and work again once it is enabled`, async () => {
    const { key, id } = await createKey("disabled-account-key");
    const operatorKey = await createKey("operator-key"); // no account: unaffected
    const { accountId } = await createAccount([id]);
    vi.useFakeTimers({ toFake: ["Date"] });
    const reader = instrumentedApp();
    expect((await reader.exchange(PAGE, { key })).response.status).toBe(200);
    await env.DB.batch(
      disableAccountStatements(accountId, now()).map((sql) => env.DB.prepare(sql)),
    );

    // Just before the bound, the reader's memory and another isolate (from the location's
    // cache) still accept it; at the bound every isolate refuses it like a revoked key.
    vi.advanceTimersByTime(AUTH_CACHE_TTL_MS - 1_000);
    const late = instrumentedApp();
    for (const app of [reader, late]) {
      expect((await app.exchange(PAGE, { key })).response.status).toBe(200);
    }
    vi.advanceTimersByTime(1_000);
    for (const app of [reader, late, instrumentedApp()]) {
      const { response } = await app.exchange(PAGE, { key });
      await expectError(response, 401, "unauthorized", /invalid or revoked/);
      expect(response.headers.get("WWW-Authenticate")).toBe(
        'Bearer realm="petstore", error="invalid_token"',
      );
    }
    const other = await reader.exchange(PAGE, { key: operatorKey.key });
    expect(other.response.status).toBe(200);

    // Enabled: the refusal is cached at most AUTH_UNKNOWN_TTL_MS, then the key works again.
    await run(enableAccountStatement(accountId));
    vi.advanceTimersByTime(AUTH_UNKNOWN_TTL_MS);
    for (const app of [reader, instrumentedApp()]) {
      expect((await app.exchange(PAGE, { key })).response.status).toBe(200);
    }
  });
});
