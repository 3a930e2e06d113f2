// GET /v1/pets: ascending keyset pages, and its query parameters, each refused before
// the database (refusalChecker) with a 400 that names it.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
import type { Pet } from "../src/pets/schemas.ts";
import { BASE, call, createCheckedApp, createPetVia, expectError, makeRequest } from "./helpers.ts";
import { NO_EDGE_CACHE } from "./support/instrumentation.ts";
import {
  nextLink,
  type RefusalChecker,
  refusalChecker,
  SQL_PAYLOADS,
  walkPages,
} from "./support/requests.ts";

let key: string;
let checker: RefusalChecker;
const created: Pet[] = [];
const STATUSES = ["available", "pending", "sold"] as const;

beforeAll(async () => {
  checker = await refusalChecker("list-pets");
  key = checker.key;
  // 47 pets in a known pattern; storage is per file, so these are the only pets here.
  for (let i = 0; i < 47; i++) {
    const pet = { name: `pet-${i}`, categoryId: (i % 5) + 1, status: STATUSES[i % 3] };
    created.push((await createPetVia(key, pet)) as Pet);
  }
});

describe("listing", () => {
  it.each([
    ["", 20, true],
    ["?limit=1", 1, true],
    ["?limit=100", 47, false],
    // Unknown parameters, however long, are ignored.
    [`?limit=2&sort=desc&foo=bar&x=${"y".repeat(10_000)}`, 2, true],
  ])(
    "GET /v1/pets%s: the first %i pets in id order, exactly as created",
    async (query, count, more) => {
      const response = await call(`/v1/pets${query}`, { key });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(created.slice(0, count));
      expect(response.headers.get("Link") !== null).toBe(more);
    },
  );

  it.each([undefined, ...STATUSES])(
    "walks every page (status %s): no gaps, no repeats, the query in each Link, none on the last",
    async (status) => {
      const limit = status ? 4 : 10;
      const pages = await walkPages(
        `/v1/pets?limit=${limit}${status ? `&status=${status}` : ""}`,
        key,
      );
      const expected = created.filter((p) => !status || p.status === status);
      expect(pages.flatMap((page) => page.pets)).toEqual(expected);
      expect(pages).toHaveLength(Math.ceil(expected.length / limit));
      expect(pages.at(-1)?.next).toBeNull();
      for (const { next } of pages.slice(0, -1)) {
        expect(next?.startsWith(`${BASE}/v1/pets?`)).toBe(true);
        const params = new URL(next ?? "").searchParams;
        expect(params.get("status")).toBe(status ?? null);
        expect(params.get("limit")).toBe(String(limit));
        expect(params.get("cursor")).toMatch(/^[A-Za-z0-9_-]+$/);
      }
    },
  );

  it("lets limit change from page to page", async () => {
    const next = new URL(nextLink(await call("/v1/pets?limit=3", { key })) ?? "");
    next.searchParams.set("limit", "7");
    const second = await call(`${next.pathname}${next.search}`, { key });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(created.slice(3, 10));
  });
});

describe("400 invalid_parameter, naming the one parameter", () => {
  const rule: Record<string, RegExp> = {
    limit: /"limit".*integer from 1 to 100/,
    status: /"status" must be one of available, pending, sold/,
  };
  const limits = ["0", "101", "-1", "+5", "05", "01", "1.0", "1.5", "1e2", "0x10", "%205", "5%00"];
  const statuses = ["AVAILABLE", "Sold", "", "adopted", "available ", "sold".repeat(5_000)];
  it.each(
    [
      ...[...limits, "５", "", "abc", "20abc", "99999999999999999999", "9".repeat(400)].map(
        (value) => `limit=${value}`,
      ),
      `limit=1${"0".repeat(10_000)}`,
      ...[...statuses, ...SQL_PAYLOADS, "available' --", "sold' OR '1'='1"].map(
        (value) => `status=${encodeURIComponent(value)}`,
      ),
      // Repeated, even with one value twice.
      ...["limit=1&limit=2", "limit=5&limit=5", "limit=1&limit=", "limit=1&".repeat(2_000)],
      ...["status=sold&status=pending", "status=sold&status=sold", "cursor=a&cursor=b"],
    ].map((query) => ({ query, shown: query.slice(0, 40) })),
  )("$shown", async ({ query }) => {
    const field = query.slice(0, query.indexOf("="));
    const repeated = query.includes(`&${field}=`);
    const message = repeated ? new RegExp(`"${field}".*at most once`) : rule[field];
    const { body } = await checker.expectRefused(
      `/v1/pets?${query}`,
      400,
      "invalid_parameter",
      message,
    );
    expect(body.details).toEqual([{ field, message: expect.any(String) }]);
    expect(body.message).toBe(`Query parameter "${field}" ${body.details?.[0]?.message}.`);
  });
});

describe("400 invalid_cursor", () => {
  async function cursorFor(query: string): Promise<string> {
    const cursor = new URL(
      nextLink(await call(`/v1/pets?${query}`, { key })) ?? "",
    ).searchParams.get("cursor");
    expect(cursor).toBeTruthy();
    return cursor as string;
  }

  const refused = (query: string, message?: RegExp) =>
    checker.expectRefused(`/v1/pets?${query}`, 400, "invalid_cursor", message);
  /** A cursor of the issued shape (base64url) with `payload` for its id and a made-up MAC. */
  const forged = (payload: string) =>
    btoa(`c1.${payload}..AAAAAAAAAAAAAAAA`)
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
  it.each(
    ["abc", "MTAw", forged("10"), "%00", "a".repeat(500), "", ...SQL_PAYLOADS]
      .concat(SQL_PAYLOADS.slice(0, 6).map(forged))
      .map((cursor) => `cursor=${encodeURIComponent(cursor)}`)
      .concat(`cursor=${"A".repeat(20_000)}`, `cursor=${"%FF".repeat(5_000)}`)
      .map((query) => ({ query, shown: query.slice(0, 50) })),
  )("for a cursor the service did not issue: $shown", async ({ query }) => {
    await refused(query, /"cursor"/);
  });

  it("for an altered cursor", async () => {
    const cursor = await cursorFor("limit=2");
    const decoded = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const altered = btoa(decoded.replace(/^c1\.\d+/, "c1.40")).replaceAll("=", "");
    await refused(`cursor=${altered}`);
    await refused(`cursor=${cursor.slice(0, -2)}${cursor.endsWith("A") ? "BB" : "AA"}`);
  });

  const b64url = (bytes: Uint8Array) =>
    btoa(String.fromCharCode(...bytes))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
  const text = (s: string) => new TextEncoder().encode(s);
  /** A cursor with `payload` (`version.id.status`) and its MAC under `secret`. */
  const mint = async (payload: string, secret = LOCAL_CURSOR_SECRET) => {
    const key = await crypto.subtle.importKey(
      "raw",
      text(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, text(payload)), 0, 16);
    return b64url(text(`${payload}.${b64url(mac)}`));
  };

  it("for a cursor forged for any position and filter: with the checksum of earlier builds, or another secret", async () => {
    // A page that starts after id 40, with and without a filter: 200 with the right key...
    for (const status of [undefined, "sold"] as const) {
      const page = `limit=2${status ? `&status=${status}` : ""}`;
      const issued = await encodeCursor(40, status, LOCAL_CURSOR_SECRET);
      const response = await call(`/v1/pets?${page}&cursor=${issued}`, { key });
      expect(response.status).toBe(200);
      const after40 = created.filter((p) => p.id > 40 && (!status || p.status === status));
      expect(await response.json()).toEqual(after40.slice(0, 2));
      // ...and 400 made any other way: earlier builds' SHA-256 over a constant in the source,
      const payload = `c1.40.${status ?? ""}`;
      const digest = await crypto.subtle.digest("SHA-256", text(`petstore-cursor|${payload}`));
      const old = b64url(text(`${payload}.${b64url(new Uint8Array(digest, 0, 12))}`));
      await refused(`${page}&cursor=${old}`, /not a cursor issued by this service/);
      // or an HMAC under another secret.
      const other = await encodeCursor(40, status, `not ${LOCAL_CURSOR_SECRET}`);
      await refused(`${page}&cursor=${other}`, /not a cursor issued by this service/);
    }
  });

  it("for an issued cursor spelled another way (unused trailing bits set)", async () => {
    const cursor = await encodeCursor(7, undefined, LOCAL_CURSOR_SECRET);
    // The last character carries 2 or 4 bits that no byte uses; its lowest one is among them.
    expect(cursor.length % 4).not.toBe(0);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(cursor.at(-1) ?? "");
    const respelled = `${cursor.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(atob(respelled.replaceAll("-", "+").replaceAll("_", "/"))).toBe(
      atob(cursor.replaceAll("-", "+").replaceAll("_", "/")),
    );
    expect((await call(`/v1/pets?cursor=${cursor}`, { key })).status).toBe(200);
    await refused(`cursor=${respelled}`, /not a cursor issued by this service/);
  });

  it("for a cursor with a valid MAC but another version, an id not in decimal digits, or past 2^53 - 1", async () => {
    const largest = await mint("c1.9007199254740991.");
    const response = await call(`/v1/pets?cursor=${largest}`, { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    for (const payload of [
      "c2.10.",
      "c0.10.",
      "C1.10.",
      "c1.01.",
      "c1.-1.",
      "c1.1e0.",
      "c1.1e3.",
      "c1.+1.",
      "c1. 1.",
      "c1..",
      "c1.9007199254740992.",
      "c1.99999999999999999999.",
    ]) {
      await refused(`cursor=${await mint(payload)}`, /"cursor" is malformed/);
    }
  });

  it("in a deployed environment, cursors are made with its CURSOR_SECRET; without one, a page that needs a cursor is 500", async () => {
    // Without the edge cache: pages other tests cached carry cursors of the local secret.
    const app = createCheckedApp({ log: () => {}, edgeCache: () => NO_EDGE_CACHE });
    const deployed = { ...env, ENVIRONMENT: "production", CURSOR_SECRET: "production secret" };
    const first = await app.fetch(makeRequest("/v1/pets?limit=2", { key }), deployed);
    const cursor = new URL(nextLink(first) ?? "").searchParams.get("cursor");
    expect(cursor).toBe(await encodeCursor(created[1]?.id ?? 0, undefined, "production secret"));
    const next = await app.fetch(
      makeRequest(`/v1/pets?limit=2&cursor=${cursor}`, { key }),
      deployed,
    );
    expect(await next.json()).toEqual(created.slice(2, 4));
    const local = await encodeCursor(created[1]?.id ?? 0, undefined, LOCAL_CURSOR_SECRET);
    const refusedHere = makeRequest(`/v1/pets?limit=2&cursor=${local}`, { key });
    await expectError(await app.fetch(refusedHere, deployed), 400, "invalid_cursor");
    const { CURSOR_SECRET: _, ...withoutSecret } = deployed;
    const failed = await app.fetch(makeRequest("/v1/pets?limit=2", { key }), withoutSecret);
    await expectError(failed, 500, "internal_error");
  });

  it("for a cursor replayed with another status, or without its status", async () => {
    const sold = await cursorFor("limit=2&status=sold");
    await refused(`cursor=${sold}&status=pending`, /status=sold/);
    await refused(`cursor=${sold}`);
    await refused(`cursor=${await cursorFor("limit=2")}&status=sold`, /no status filter/);
  });
});
