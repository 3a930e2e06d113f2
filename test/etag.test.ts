// Unit tests of the two pieces of logic behind conditional reads: If-None-Match
// matching (RFC 9110 13.1.2, weak comparison) and the edge-cache key (normalised
// request). Behaviour through HTTP is in test/conditional-read.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EDGE_CACHE_VERSION } from "../src/config.ts";
import { cacheKey } from "../src/http/conditional-read.ts";
import { entityTag, ifNoneMatchMatches } from "../src/http/etag.ts";
import { listPets } from "../src/operations.ts";

const importMetaEnv = (import.meta as { env?: Record<string, string | undefined> }).env;
const seed = Number(importMetaEnv?.VITE_FC_SEED ?? 20261122);
const read = listPets.conditional as NonNullable<typeof listPets.conditional>;

describe("entityTag", () => {
  it("is strong, quoted, and the same for the same bytes only", async () => {
    const bytes = (s: string) => new Uint8Array(new TextEncoder().encode(s));
    const a = await entityTag(bytes('[{"id":1}]'));
    expect(a).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(await entityTag(bytes('[{"id":1}]'))).toBe(a);
    expect(await entityTag(bytes('[{"id":2}]'))).not.toBe(a);
    expect(await entityTag(bytes('[{"id":1} ]'))).not.toBe(a);
  });
});

describe("ifNoneMatchMatches (weak comparison)", () => {
  const tag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['"x",W/"abc"', true],
    ["*", true],
    [' "abc" ', true],
    ['"ABC"', false],
    ["abc", false],
    ['W/"x"', false],
    ['"abc', false],
    ["", false],
  ])('If-None-Match %j against "abc": %s', (field, expected) => {
    expect(ifNoneMatchMatches(field, tag)).toBe(expected);
  });

  it("no field never matches", () => {
    expect(ifNoneMatchMatches(undefined, tag)).toBe(false);
  });

  it("a list matches exactly when one of its tags is the current one (generated lists)", () => {
    const opaque = fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/);
    fc.assert(
      fc.property(
        opaque,
        fc.array(fc.tuple(opaque, fc.boolean()), { maxLength: 5 }),
        (cur, list) => {
          const field = list.map(([o, weak]) => `${weak ? "W/" : ""}"${o}"`).join(", ");
          const expected = list.some(([o]) => o === cur);
          expect(ifNoneMatchMatches(field, `"${cur}"`)).toBe(expected);
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});

describe("cacheKey (listPets)", () => {
  const key = (query: string) => cacheKey(new URL(`https://api.test/v1/pets${query}`), read);

  it("lists limit, status and cursor in a fixed order, fills the default limit, drops the rest", () => {
    expect(key("")).toBe(`https://api.test/_edge/v${EDGE_CACHE_VERSION}/v1/pets?limit=20`);
    expect(key("?cursor=c1&x=1&status=sold")).toBe(
      `https://api.test/_edge/v${EDGE_CACHE_VERSION}/v1/pets?limit=20&status=sold&cursor=c1`,
    );
  });

  it("keeps nothing for a repeated selecting parameter (a 400 anyway)", () => {
    expect(key("?limit=2&limit=3")).toBeUndefined();
    expect(key("?status=sold&status=sold")).toBeUndefined();
  });

  it("order and unknown parameters never split an entry; limit, status and cursor always do (generated)", () => {
    const param = fc.constantFrom("limit", "status", "cursor");
    const value = fc.stringMatching(/^[a-z0-9]{1,4}$/);
    const unknown = fc.tuple(fc.constantFrom("utm", "x", "page", "key"), value);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(param, value), { selector: ([name]) => name }),
        fc.array(unknown, { maxLength: 3 }),
        fc.integer({ min: 0, max: 1000 }),
        (selecting, extra, shuffle) => {
          const all = [...selecting, ...extra];
          const shuffled = all
            .map((p, i) => ({ p, k: (i * 7919 + shuffle) % 1009 }))
            .sort((a, b) => a.k - b.k)
            .map(({ p }) => p);
          const query = (ps: Array<[string, string]>) =>
            `?${ps.map(([n, v]) => `${n}=${v}`).join("&")}`;
          const base = key(query(selecting));
          expect(key(query(shuffled))).toBe(base);
          for (const [name, v] of selecting) {
            const changed = selecting.map(([n, w]): [string, string] => [
              n,
              n === name ? `${v}z` : w,
            ]);
            expect(key(query(changed))).not.toBe(base);
          }
        },
      ),
      { seed, numRuns: 300 },
    );
  });

  it("getPet's key is its path; other hosts never share an entry", () => {
    const a = cacheKey(new URL("https://api.test/v1/pets/7?x=1"), { immutable: "always" });
    expect(a).toBe(`https://api.test/_edge/v${EDGE_CACHE_VERSION}/v1/pets/7`);
    const b = cacheKey(new URL("https://other.test/v1/pets/7"), { immutable: "always" });
    expect(b).not.toBe(a);
  });
});
