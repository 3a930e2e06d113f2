// Unit tests of the two pieces of logic behind conditional reads: If-None-Match
// matching (RFC 9110 13.1.2, weak comparison) and the edge-cache key (normalised
// request). Behaviour through HTTP is in test/conditional-read.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cacheKey } from "../src/http/conditional-read.ts";
import { entityTag, ifNoneMatchMatches } from "../src/http/etag.ts";
import { getPet, listPets } from "../src/operations/index.ts";
import { ListPetsQuerySchema, PetIdParamSchema } from "../src/pets/schemas.ts";

const importMetaEnv = (import.meta as { env?: Record<string, string | undefined> }).env;
const seed = Number(importMetaEnv?.VITE_FC_SEED ?? 20261122);

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
    ['x"abc"', false],
    ['"abc"x', false],
    ['xW/"abc"', false],
    ['W/"abc"x', false],
    ["", false],
    [undefined, false],
  ])('If-None-Match %j against "abc": %s', (field, expected) => {
    expect(ifNoneMatchMatches(field, tag)).toBe(expected);
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

describe("cacheKey: built from the validated request", () => {
  /** The key of a listPets request (no parameter repeated), after validation, or null. */
  const key = (query: string) => {
    const validated = ListPetsQuerySchema.safeParse(Object.fromEntries(new URLSearchParams(query)));
    return validated.success
      ? cacheKey("https://api.test", { path: listPets.path, shape: "s" }, { query: validated.data })
      : null;
  };

  it("lists cursor, limit and status by name, fills the default limit, drops the rest", () => {
    expect(key("")).toBe(`https://api.test/_cache/s/v1/pets?limit=20`);
    expect(key("?status=sold&x=1&cursor=c1")).toBe(
      `https://api.test/_cache/s/v1/pets?cursor=c1&limit=20&status=sold`,
    );
  });

  it("order and unknown parameters never split an entry; limit, status and cursor always do (generated)", () => {
    const value = {
      limit: fc.integer({ min: 1, max: 99 }).map(String),
      status: fc.constantFrom("available", "pending"),
      cursor: fc.stringMatching(/^[a-z0-9]{1,4}$/),
    };
    const changed = { limit: (v: string) => String(Number(v) + 1), status: () => "sold" };
    const param = fc.constantFrom("limit", "status", "cursor");
    const unknown = fc.tuple(fc.constantFrom("utm", "x", "page", "key"), value.cursor);
    fc.assert(
      fc.property(
        fc
          .uniqueArray(param, { maxLength: 3 })
          .chain((names) =>
            fc.tuple(...names.map((n) => value[n].map((v): [string, string] => [n, v]))),
          ),
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
          expect(base).not.toBeNull();
          expect(key(query(shuffled))).toBe(base);
          for (const [name, v] of selecting) {
            const other = name === "cursor" ? `${v}z` : changed[name as "limit" | "status"](v);
            const altered = selecting.map(([n, w]): [string, string] => [
              n,
              n === name ? other : w,
            ]);
            expect(key(query(altered))).not.toBe(base);
          }
        },
      ),
      { seed, numRuns: 300 },
    );
  });

  it("getPet's key is its path with the validated id; other hosts never share an entry", () => {
    const param = PetIdParamSchema.parse({ petId: "7" });
    const a = cacheKey("https://api.test", { path: getPet.path, shape: "s" }, { param });
    expect(a).toBe(`https://api.test/_cache/s/v1/pets/7`);
    expect(cacheKey("https://other.test", { path: getPet.path, shape: "s" }, { param })).not.toBe(
      a,
    );
  });
});

describe("ifNoneMatchMatches against a current tag that is not an entity tag", () => {
  it("only * matches it: not itself, not a member that is no entity tag either", () => {
    for (const current of ["abc", "", 'W/"abc'])
      for (const [field, expected] of [
        ["*", true],
        [current, false],
        ["abc", false],
        ['"abc"', false],
        ["x, y", false],
      ] as const) {
        expect(ifNoneMatchMatches(field, current), `${field} against ${current}`).toBe(expected);
      }
  });
});
