// Cursors (src/pets/cursor.ts) refused for another status filter say which one they were
// issued for and which one they were sent with; the secret they are made with.
import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { base64url, hmacBase64url } from "../src/encoding.ts";
import {
  cursorSecret,
  decodeCursor,
  encodeCursor,
  LOCAL_CURSOR_SECRET,
} from "../src/pets/cursor.ts";
import type { PetStatus } from "../src/pets/schemas.ts";
import { call, createKey, expectError } from "./helpers.ts";

let key: string;
beforeAll(async () => {
  ({ key } = await createKey("cursor"));
});

it.each<[PetStatus | undefined, PetStatus | undefined, string]>([
  ["sold", "pending", "was issued for status=sold, not for status=pending"],
  [undefined, "sold", "was issued for no status filter, not for status=sold"],
  ["sold", undefined, "was issued for status=sold, not for no status filter"],
])(
  "a cursor issued for %s and sent with %s is 400 invalid_cursor naming both",
  async (issued, sent, why) => {
    const cursor = await encodeCursor(1, issued, cursorSecret(env));
    const query = new URLSearchParams({ ...(sent ? { status: sent } : {}), cursor });
    const body = await expectError(await call(`/v1/pets?${query}`, { key }), 400, "invalid_cursor");
    expect(body.message).toBe(`Query parameter "cursor" ${why}.`);
  },
);

it("cursors are made with CURSOR_SECRET; locally without one, the public local secret; deployed without one, never", () => {
  expect(cursorSecret({ ENVIRONMENT: "production", CURSOR_SECRET: "s" })).toBe("s");
  expect(cursorSecret({ ENVIRONMENT: "local", CURSOR_SECRET: "s" })).toBe("s");
  expect(cursorSecret({ ENVIRONMENT: "local" })).toBe(LOCAL_CURSOR_SECRET);
  for (const ENVIRONMENT of ["staging", "production"]) {
    expect(() => cursorSecret({ ENVIRONMENT })).toThrow(
      "CURSOR_SECRET is not set: npx wrangler secret put CURSOR_SECRET --env <name>",
    );
  }
});

it("a cursor is read only up to 200 characters: a longer one is refused before it is decoded, even with a valid MAC", async () => {
  /** A cursor with a valid MAC whose id has `digits` digits (too large to be an id). */
  const made = async (digits: number) => {
    const payload = `c1.${"1".repeat(digits)}.`;
    const mac = await hmacBase64url(LOCAL_CURSOR_SECRET, payload, 16);
    return base64url(new TextEncoder().encode(`${payload}.${mac}`));
  };
  const refusal = (cursor: string) =>
    decodeCursor(cursor, undefined, LOCAL_CURSOR_SECRET).then(
      () => "accepted",
      (err: Error) => err.message,
    );
  const longest = await made(123);
  expect(longest).toHaveLength(200);
  expect(await refusal(longest)).toBe('Query parameter "cursor" is malformed.');
  const longer = await made(124);
  expect(longer.length).toBeGreaterThan(200);
  expect(await refusal(longer)).toBe(
    'Query parameter "cursor" is not a cursor issued by this service.',
  );
});

it("a cached cursor is the one its secret, id and status make: another secret, id or status gets its own", async () => {
  const made = async (afterId: number, status: PetStatus | undefined, secret: string) => {
    const payload = `c1.${afterId}.${status ?? ""}`;
    const mac = await hmacBase64url(secret, payload, 16);
    return base64url(new TextEncoder().encode(`${payload}.${mac}`));
  };
  const cases: Array<[number, PetStatus | undefined, string]> = [
    [20, undefined, "secret one"],
    [20, undefined, "secret two"],
    [21, undefined, "secret one"],
    [20, "sold", "secret one"],
  ];
  // Twice each, so the second of each is the cached one.
  for (const round of [1, 2]) {
    for (const [afterId, status, secret] of cases) {
      const cursor = await encodeCursor(afterId, status, secret);
      expect(cursor, `round ${round}: ${afterId} ${status} ${secret}`).toBe(
        await made(afterId, status, secret),
      );
      expect(await decodeCursor(cursor, status, secret)).toBe(afterId);
    }
  }
});
