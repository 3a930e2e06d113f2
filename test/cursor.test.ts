// Cursors (src/pets/cursor.ts) refused for another status filter say which one they were
// issued for and which one they were sent with; the secret they are made with.
import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { cursorSecret, encodeCursor, LOCAL_CURSOR_SECRET } from "../src/pets/cursor.ts";
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
