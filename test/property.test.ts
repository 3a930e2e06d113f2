// Property-based tests, inside workerd against the local D1: generated createPet bodies,
// listPets queries, petId segments, cursors and Authorization headers each get exactly
// the response a reference model of the rules predicts. call() checks every response against
// the OpenAPI document (status, headers, the Pet and Error shapes), so the model checks
// the values. The seed is fixed and printed; override it with VITE_FC_SEED=<n>.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, createKey, createPetVia, expectError } from "./helpers.ts";
import { expectCreated, nextLink, type PetBody, walkPages } from "./support/requests.ts";

const importMetaEnv = (import.meta as { env?: Record<string, string | undefined> }).env;
const seed = Number(importMetaEnv?.VITE_FC_SEED ?? 20261122);
const MAX = Number.MAX_SAFE_INTEGER;
const STATUSES = ["available", "pending", "sold"] as const;
const FIELDS = ["name", "categoryId", "status"];
const TIMEOUT = 120_000;

/** Cases per property; the total is printed with the seed. */
const RUNS = {
  roundTrip: 200,
  createBodies: 800,
  names: 400,
  listQueries: 600,
  petIds: 300,
  authorization: 500,
} as const;

function assertProperty<T>(property: fc.IAsyncPropertyWithHooks<T>, numRuns: number) {
  return fc.assert(property, { seed, numRuns, endOnFailure: true });
}

// ------------------------------------------------------------------ the model

// The name rule as the contract states it ("Pets"), by the Unicode properties it names;
// what the service refuses is for the server to decide, and for this model to predict.
type CharacterKind = "control" | "bidi" | "unassigned" | "invisible" | "unsigned" | "sign";

/** What the contract makes of one character (a code point that is not a surrogate). */
function kindOf(character: string): CharacterKind {
  if (/\p{Cc}/u.test(character)) return "control"; // U+0000-U+001F, U+007F-U+009F
  if (/\p{Bidi_Control}/u.test(character)) return "bidi";
  if (/[\p{Noncharacter_Code_Point}\p{Cn}]/u.test(character)) return "unassigned";
  if (/[\p{White_Space}\p{Cf}\p{Default_Ignorable_Code_Point}]/u.test(character)) {
    return "invisible";
  }
  // The two blanks the contract names.
  if (character === "\u2800" || character === "\ufffc") return "invisible";
  // A letter, number, punctuation mark or symbol; else a mark or a private-use character.
  return /[\p{L}\p{N}\p{P}\p{S}]/u.test(character) ? "sign" : "unsigned";
}

/**
 * Code points of each kind but the signs (most of Unicode): all of them in the BMP, and
 * every 97th beyond it for the two kinds that fill whole planes there.
 */
const CHARACTERS: Record<Exclude<CharacterKind, "sign">, string[]> = {
  control: [],
  bidi: [],
  unassigned: [],
  invisible: [],
  unsigned: [],
};
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const character = String.fromCodePoint(cp);
  const kind = kindOf(character);
  if (kind === "sign") continue;
  if ((kind === "unassigned" || kind === "unsigned") && cp > 0xffff && cp % 97 !== 0) continue;
  CHARACTERS[kind].push(character);
}
const WHITE_SPACE = [...CHARACTERS.control, ...CHARACTERS.invisible].filter((c) =>
  /\p{White_Space}/u.test(c),
);

/** Whether a name passes the rules. */
function isValidName(value: unknown): value is string {
  if (typeof value !== "string" || !value.isWellFormed()) return false;
  const kinds = [...value].map(kindOf);
  return (
    kinds.length >= 1 &&
    kinds.length <= 100 &&
    !kinds.includes("control") &&
    !kinds.includes("bidi") &&
    !kinds.includes("unassigned") &&
    kinds.includes("sign")
  );
}

it("the model's classes are the contract's: its bidirectional controls, controls and blanks by name", () => {
  const hex = (c: string) => (c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  const range = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => hex(String.fromCodePoint(from + i)));
  expect(CHARACTERS.bidi.map(hex)).toEqual([
    "061C",
    "200E",
    "200F",
    ...range(0x202a, 0x202e),
    ...range(0x2066, 0x2069),
  ]);
  expect(CHARACTERS.control.map(hex)).toEqual([...range(0, 0x1f), ...range(0x7f, 0x9f)]);
  for (const blank of ["\u2800", "\ufffc", "\u200b", "\u3164", "\ufe0f", "\u{e0041}", "\u00a0"]) {
    expect(kindOf(blank), hex(blank)).toBe("invisible");
  }
  for (const shown of ["R", "\u2801", "\u{1f415}", "\u0631", "\ufffd", "7", "!", "\u20ac"]) {
    expect(kindOf(shown), hex(shown)).toBe("sign");
  }
  // A combining mark and private-use characters show, but are no name alone.
  for (const unsigned of ["\u0301", "\ue000", "\uf8ff", "\u{f0000}", "\u{10fffd}"]) {
    expect(kindOf(unsigned), hex(unsigned)).toBe("unsigned");
  }
  // Unassigned code points and noncharacters (U+FDD0-U+FDEF, U+xFFFE, U+xFFFF).
  for (const unassigned of [
    "\u0378",
    "\ufdd0",
    "\ufdef",
    "\ufffe",
    "\uffff",
    "\u{1fffe}",
    "\u{10ffff}",
  ]) {
    expect(kindOf(unassigned), hex(unassigned)).toBe("unassigned");
  }
});

const isValidCategoryId = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 1;

const isStatus = (value: unknown): value is (typeof STATUSES)[number] =>
  (STATUSES as readonly unknown[]).includes(value);

type Expected =
  | { kind: "created"; pet: Omit<PetBody, "id"> }
  | { kind: "not_object" }
  | { kind: "invalid"; fields: string[] }
  | { kind: "invalid_json" };

/** What createPet must respond for this parsed JSON body. */
function expectedForBody(body: unknown): Expected {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return { kind: "not_object" };
  const record = body as Record<string, unknown>;
  const fields: string[] = [];
  if (!Object.hasOwn(record, "name") || !isValidName(record.name)) fields.push("name");
  if (!Object.hasOwn(record, "categoryId") || !isValidCategoryId(record.categoryId))
    fields.push("categoryId");
  if (Object.hasOwn(record, "status") && !isStatus(record.status)) fields.push("status");
  fields.push(...Object.keys(record).filter((field) => !FIELDS.includes(field)));
  if (fields.length > 0) return { kind: "invalid", fields };
  const { name, categoryId, status = "available" } = record as Omit<PetBody, "id">;
  return { kind: "created", pet: { name, categoryId, status } };
}

function expectedForText(text: string): Expected {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, "")); // a UTF-8 BOM is dropped by the decoder
  } catch {
    return { kind: "invalid_json" };
  }
  return expectedForBody(value);
}

/** The JSON body of a response that must have `status` (its shape call() has checked). */
async function bodyOf<T = unknown>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

// ------------------------------------------------------------- the generators

/** One character from the code points min..max. */
const char = (min: number, max: number) =>
  fc.integer({ min, max }).map((cp) => String.fromCodePoint(cp));
/** An assigned character beyond the BMP (most code points there are unassigned). */
const astral = char(0x10000, 0x10ffff).filter((c) => kindOf(c) !== "unassigned");
/** Any assigned code point, surrogates and noncharacters excluded. */
const assigned = char(0, 0x10ffff).filter((c) => !/\p{Cs}/u.test(c) && kindOf(c) !== "unassigned");
const whiteSpace = fc.constantFrom(...WHITE_SPACE);
const control = fc.constantFrom(...CHARACTERS.control);
const bidiControl = fc.constantFrom(...CHARACTERS.bidi);
/** Characters that show nothing: white space, format and other default-ignorable ones, blanks. */
const invisible = fc.constantFrom(...CHARACTERS.invisible);
/** A name with one character of `forbidden` among visible ones. */
const holding = (forbidden: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.string({ maxLength: 5 }), forbidden, fc.string({ unit: "grapheme", maxLength: 5 }))
    .map(([a, c, b]) => `${a}${c}${b}`);
/** Only invisible characters (white space that is not a control among them). */
const invisibleOnly = fc.array(invisible, { minLength: 1, maxLength: 8 }).map((a) => a.join(""));
const unassigned = fc.constantFrom(...CHARACTERS.unassigned);
/** Marks and private-use characters, with invisible ones perhaps, but no sign. */
const unsignedOnly = fc
  .tuple(
    fc.array(fc.constantFrom(...CHARACTERS.unsigned), { minLength: 1, maxLength: 6 }),
    fc.array(invisible, { maxLength: 2 }),
  )
  .map(([a, b]) => a.join("") + b.join(""));

const validName = fc
  .oneof(
    fc.string({ unit: assigned, minLength: 1, maxLength: 100 }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
    fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 100 }),
    fc.array(astral, { minLength: 1, maxLength: 100 }).map((a) => a.join("")),
    fc
      .array(fc.oneof(astral, assigned), {
        minLength: 100,
        maxLength: 100,
      })
      .map((a) => a.join("")),
    fc
      .tuple(
        fc.array(fc.constantFrom(" ", "\u3000", "\u00a0"), { maxLength: 3 }),
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 5 }),
        fc.array(fc.constantFrom(" ", "\u3000", "\u2029"), { maxLength: 3 }),
      )
      .map(([a, b, c]) => a.join("") + b + c.join("")),
    // Invisible characters beside visible ones are fine (ZWJ sequences, selectors, blanks).
    fc
      .tuple(fc.array(invisible, { maxLength: 3 }), fc.string({ unit: "grapheme", minLength: 1 }))
      .map(([a, b]) => a.join("") + b),
  )
  .filter(isValidName);

const invalidName = fc.oneof(
  fc.constant(""),
  fc.string({ unit: "grapheme-ascii", minLength: 101, maxLength: 120 }),
  fc.array(astral, { minLength: 101, maxLength: 110 }).map((a) => a.join("")),
  holding(char(0, 0x1f)),
  fc.string({ maxLength: 5 }).map((s) => `${s}\u007f`),
  fc.array(whiteSpace, { minLength: 1, maxLength: 8 }).map((a) => a.join("")),
  holding(control),
  holding(bidiControl),
  holding(unassigned),
  invisibleOnly,
  unsignedOnly,
  fc.tuple(fc.string({ maxLength: 5 }), char(0xd800, 0xdfff)).map(([a, s]) => a + s),
  fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 })),
);

const validCategoryId = fc.oneof(
  fc.constantFrom(1, MAX),
  fc.integer({ min: 1, max: 1000 }),
  fc.integer({ min: 1, max: MAX }),
);

const invalidCategoryId = fc.oneof(
  fc.integer({ min: -MAX, max: 0 }),
  fc.constantFrom(2 ** 53, 2 ** 53 + 2, 2 ** 63, 1e300, 0.5, 1.5, -0),
  fc.double().filter((d) => !Number.isInteger(d)),
  fc.string({ maxLength: 8 }),
  fc.integer({ min: 1, max: 100 }).map(String),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.nat(), { maxLength: 2 }),
  fc.constant({}),
);

const invalidStatus = fc.oneof(
  fc.constantFrom(null, "", "Available", "SOLD", " sold", "adopted", "available\u0000"),
  fc.string({ maxLength: 10 }).filter((s) => !isStatus(s)),
  fc.integer(),
  fc.boolean(),
);

/** Keys beside the three fields: near misses and the prototype's names. */
const EXTRA = ["id", "Name", "__proto__", "constructor", "toString", "prototype", "status ", ""];
const extraKey = fc
  .oneof(fc.constantFrom(...EXTRA), fc.string({ maxLength: 8 }))
  .filter((k) => !FIELDS.includes(k));

/** A JSON object text with fields in any order (so `__proto__` is an own key, as on the wire). */
function objectText(entries: Array<[string, unknown]>): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`;
}

const mixedBody: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({
        // Mostly valid values, so that about a fifth of the bodies are valid pets.
        name: fc.option(fc.oneof({ weight: 4, arbitrary: validName }, invalidName), {
          nil: undefined,
          freq: 20,
        }),
        categoryId: fc.option(
          fc.oneof({ weight: 4, arbitrary: validCategoryId }, invalidCategoryId),
          { nil: undefined, freq: 20 },
        ),
        status: fc.option(
          fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...STATUSES) }, invalidStatus),
          { nil: undefined },
        ),
        extra: fc.oneof(
          { weight: 3, arbitrary: fc.constant([] as Array<[string, unknown]>) },
          fc.uniqueArray(fc.tuple(extraKey, fc.jsonValue({ maxDepth: 2 })), {
            minLength: 1,
            maxLength: 2,
            selector: ([k]) => k,
          }),
        ),
      })
      .chain(({ extra, ...fields }) => {
        const entries = [...Object.entries(fields).filter(([, v]) => v !== undefined), ...extra];
        return fc.shuffledSubarray(entries, {
          minLength: entries.length,
          maxLength: entries.length,
        });
      })
      .map(objectText),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
);

// ------------------------------------------------------------------ the tests

const keys: Record<keyof typeof RUNS, string> = {} as never;
/** Cursors the service issued, by the status filter they were issued for. */
const issuedCursors: Array<{ cursor: string; status: string; afterId: number }> = [];

/** A listing page must be exactly the rows D1 holds, with a next link when more follow. */
async function expectListing(
  response: Response,
  query: { afterId: number; limit: number; status: string | undefined },
) {
  const { results } = await env.DB.prepare(
    `SELECT id, name, category_id AS categoryId, status FROM pets
     WHERE id > ?1 AND (?3 IS NULL OR status = ?3) ORDER BY id LIMIT ?2`,
  )
    .bind(query.afterId, query.limit + 1, query.status ?? null)
    .all();
  expect(await bodyOf(response, 200)).toEqual(results.slice(0, query.limit));
  expect(nextLink(response) !== null).toBe(results.length > query.limit);
}

describe(`property tests (fast-check seed ${seed}; override with VITE_FC_SEED)`, {
  timeout: TIMEOUT,
}, () => {
  beforeAll(async () => {
    // Thousands of requests: keep the worker's per-request log lines out of the report.
    vi.spyOn(console, "log").mockImplementation(() => {});
    const total = Object.values(RUNS).reduce((a, b) => a + b, 0);
    console.info(`fast-check seed ${seed}, ${total} cases:`, JSON.stringify(RUNS));
    for (const name of Object.keys(RUNS) as Array<keyof typeof RUNS>) {
      keys[name] = (await createKey(`property-${name}`)).key;
    }
    // Pets of every status, and the cursors the service issues over them.
    for (let i = 0; i < 15; i++) {
      const pet = { name: `listing ${i} 🐾`, categoryId: i + 1, status: STATUSES[i % 3] };
      await createPetVia(keys.listQueries, pet);
    }
    for (const status of [undefined, ...STATUSES]) {
      const query = `/v1/pets?limit=2${status ? `&status=${status}` : ""}`;
      for (const { pets, next } of await walkPages(query, keys.listQueries)) {
        const cursor = next && new URL(next).searchParams.get("cursor");
        const last = pets.at(-1);
        if (cursor && last) issuedCursors.push({ cursor, status: status ?? "", afterId: last.id });
      }
    }
    expect(issuedCursors.length).toBeGreaterThan(8);
  }, TIMEOUT);

  afterAll(() => {
    vi.restoreAllMocks();
  });

  it(`createPet: every valid generated pet round-trips exactly (${RUNS.roundTrip} cases)`, async () => {
    const reached = { lowerBound: 0, upperBound: 0, astralName: 0 };
    await assertProperty(
      fc.asyncProperty(
        validName,
        validCategoryId,
        fc.option(fc.constantFrom(...STATUSES), { nil: undefined }),
        async (name, categoryId, status) => {
          const json = { name, categoryId, status };
          const response = await call("/v1/pets", { method: "POST", key: keys.roundTrip, json });
          const created = await expectCreated(response, {
            ...json,
            status: status ?? "available",
          });
          const fetched = await call(`/v1/pets/${created.id}`, { key: keys.roundTrip });
          expect(await bodyOf(fetched, 200)).toEqual(created);
          if (categoryId === 1) reached.lowerBound++;
          if (categoryId === MAX) reached.upperBound++;
          if ([...name].some((c) => c.length === 2)) reached.astralName++;
        },
      ),
      RUNS.roundTrip,
    );
    // The generators must actually reach the bounds and astral names.
    expect(Math.min(...Object.values(reached)), JSON.stringify(reached)).toBeGreaterThan(0);
  });

  it(`createPet names: controls, bidirectional controls, unassigned code points, invisible-only and signless names are refused, and the document's pattern agrees (${RUNS.names} cases)`, async () => {
    const doc = (await (await call("/v1/openapi.json")).json()) as {
      components: { schemas: { PetName: { pattern: string } } };
    };
    // Read Unicode-aware (JSON Schema 2020-12) and not (draft-07-era validators, such as
    // Postman's): the pattern must mean the same to both.
    const source = doc.components.schemas.PetName.pattern;
    const patterns = [new RegExp(source, "u"), new RegExp(source)];
    const seen = { valid: 0, control: 0, bidi: 0, unassigned: 0, invisible: 0, unsigned: 0 };
    const name = fc.oneof(
      validName.map((n) => ["valid", n] as const),
      holding(control).map((n) => ["control", n] as const),
      holding(bidiControl).map((n) => ["bidi", n] as const),
      holding(unassigned).map((n) => ["unassigned", n] as const),
      invisibleOnly.map((n) => ["invisible", n] as const),
      unsignedOnly.map((n) => ["unsigned", n] as const),
    );
    await assertProperty(
      fc.asyncProperty(name, async ([kind, value]) => {
        seen[kind]++;
        expect(isValidName(value), JSON.stringify(value)).toBe(kind === "valid");
        // The length is minLength and maxLength's (they count code points); the pattern
        // decides the rest as the server does.
        const length = [...value].length;
        for (const pattern of patterns) {
          const takes = pattern.test(value) && length >= 1 && length <= 100;
          expect(takes, `${pattern.flags} ${JSON.stringify(value)}`).toBe(kind === "valid");
        }
        const json = { name: value, categoryId: 1 };
        const response = await call("/v1/pets", { method: "POST", key: keys.names, json });
        if (kind === "valid") {
          await expectCreated(response, { ...json, status: "available" });
          return;
        }
        const message = {
          control: /"name" must not contain control characters/,
          bidi: /"name" must not contain bidirectional control characters/,
          unassigned: /"name" must not contain unassigned code points or noncharacters/,
          invisible: /"name" must not be blank/,
          unsigned: /"name" needs a letter, number, punctuation mark or symbol/,
        }[kind];
        const error = await expectError(response, 400, "validation_failed", message);
        expect(error.details?.map((d) => d.field)).toEqual(["name"]);
      }),
      RUNS.names,
    );
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(RUNS.names / 12);
  });

  it(`createPet: generated bodies, valid and invalid, get 201 or the 400 that names the problem (${RUNS.createBodies} cases)`, async () => {
    const seen = { created: 0, invalid: 0, not_object: 0, invalid_json: 0 };
    await assertProperty(
      fc.asyncProperty(mixedBody, async (text) => {
        const expected = expectedForText(text);
        seen[expected.kind]++;
        const response = await call("/v1/pets", {
          method: "POST",
          key: keys.createBodies,
          headers: { "Content-Type": "application/json" },
          body: text,
        });
        if (expected.kind === "created") {
          await expectCreated(response, expected.pet);
          return;
        }
        if (expected.kind !== "invalid") {
          const code = expected.kind === "invalid_json" ? "invalid_json" : "validation_failed";
          const message =
            expected.kind === "invalid_json" ? /Request body/ : /body must be a JSON object/;
          await expectError(response, 400, code, message);
          return;
        }
        const error = await expectError(response, 400, "validation_failed");
        const reported = (error.details ?? []).map((d) => d.field);
        expect([...new Set(reported)].sort()).toEqual([...expected.fields].sort());
        const first = reported[0] ?? "";
        expect(expected.fields).toContain(first);
        expect(error.message).toContain(`"${first}"`);
      }),
      RUNS.createBodies,
    );
    // Each outcome must be exercised, or the property proves little.
    expect(seen.created).toBeGreaterThan(RUNS.createBodies / 10);
    expect(seen.invalid).toBeGreaterThan(RUNS.createBodies / 4);
    expect(seen.not_object).toBeGreaterThan(0);
    expect(seen.invalid_json).toBeGreaterThan(0);
  });

  it(`listPets: generated queries, and cursors issued, altered, forged or re-filtered, get the exact page or the 400 that names the parameter (${RUNS.listQueries} cases)`, async () => {
    const issued = fc.constantFrom(...issuedCursors);
    const b64 = (text: string) =>
      btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    const cursor = fc.oneof(
      issued.map((c) => c.cursor),
      issued.chain((c) =>
        fc
          .tuple(fc.nat({ max: c.cursor.length - 1 }), fc.constantFrom(..."AZaz09-_+/=.~ %"))
          .map(([i, ch]) => c.cursor.slice(0, i) + ch + c.cursor.slice(i + 1)),
      ),
      issued.chain((c) => fc.nat({ max: c.cursor.length - 1 }).map((n) => c.cursor.slice(0, n))),
      issued.map((c) => `${c.cursor}A`),
      fc
        .tuple(
          fc.nat({ max: 10_000 }),
          fc.constantFrom("", ...STATUSES, "lost"),
          fc.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        )
        .map(([id, status, sum]) => b64(`c1.${id}.${status}.${sum}`)),
      fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
      fc.string({ unit: "binary", maxLength: 40 }),
    );
    const values: Record<string, fc.Arbitrary<string>> = {
      limit: fc.oneof(
        fc.integer({ min: 1, max: 100 }).map(String),
        fc.integer({ min: -5, max: 300 }).map(String),
        fc.constantFrom("", "05", "1.0", "1e1", " 5", "+5", "0x10", "１"),
        fc.string({ maxLength: 6 }),
      ),
      status: fc.oneof(
        fc.constantFrom(...STATUSES, "", "Sold", "sold ", "all"),
        fc.string({ maxLength: 6 }),
      ),
      cursor,
    };
    // Any parameters, or a cursor with a valid limit and filter (so that the cursor decides).
    const query = fc.oneof(
      fc.array(
        fc
          .constantFrom("limit", "status", "cursor", "x", "Limit", "status[]")
          .chain((name) =>
            (values[name] ?? fc.string({ unit: "binary", maxLength: 10 })).map((v) => [name, v]),
          ),
        { maxLength: 4 },
      ),
      fc
        .tuple(cursor, fc.integer({ min: 1, max: 5 }), fc.constantFrom(undefined, ...STATUSES))
        .map(([c, limit, filter]) => [
          ["cursor", c],
          ["limit", String(limit)],
          ...(filter ? [["status", filter]] : []),
        ]),
    );
    const seen = { ok: 0, paged: 0, invalid_parameter: 0, invalid_cursor: 0 };
    await assertProperty(
      fc.asyncProperty(query, async (entries) => {
        const query = new URLSearchParams(entries);
        const sent = new URLSearchParams(query.toString()); // what the server will read
        const response = await call(`/v1/pets?${query}`, { key: keys.listQueries });
        const [limit, ...moreLimits] = sent.getAll("limit");
        const [status, ...moreStatuses] = sent.getAll("status");
        const bad = [
          (moreLimits.length > 0 || (limit !== undefined && !/^([1-9][0-9]?|100)$/.test(limit))) &&
            "limit",
          (moreStatuses.length > 0 || (status !== undefined && !isStatus(status))) && "status",
          sent.getAll("cursor").length > 1 && "cursor",
        ].filter((p) => p !== false);
        if (bad.length > 0) {
          seen.invalid_parameter++;
          const error = await expectError(response, 400, "invalid_parameter");
          expect(
            bad.some((p) => error.message.includes(`"${p}"`)),
            error.message,
          ).toBe(true);
          return;
        }
        const cursor = sent.get("cursor");
        let afterId = 0;
        if (cursor !== null) {
          // A cursor has one spelling: the one the service issued, for its filter.
          const issued = issuedCursors.find(
            (c) => c.cursor === cursor && c.status === (status ?? ""),
          );
          if (!issued) {
            seen.invalid_cursor++;
            await expectError(response, 400, "invalid_cursor", /"cursor"/);
            return;
          }
          afterId = issued.afterId;
          seen.paged++;
        }
        seen.ok++;
        await expectListing(response, { afterId, limit: Number(limit ?? 20), status });
      }),
      RUNS.listQueries,
    );
    expect(Math.min(...Object.values(seen))).toBeGreaterThan(0);
  });

  it(`getPet: generated petId segments get the pet, 404 or a 400 naming petId (${RUNS.petIds} cases)`, async () => {
    const { results } = await env.DB.prepare("SELECT id FROM pets").all<{ id: number }>();
    const ids = results.map((row) => row.id);
    const segment = fc
      .oneof(
        fc.constantFrom(...ids).map(String),
        fc.bigInt({ min: 1n, max: 2n ** 70n }).map(String),
        fc.stringMatching(/^[0-9]{1,20}$/),
        fc
          .tuple(
            fc.constantFrom("", " ", "+", "-", "0", "%", "\u0661"),
            fc.constantFrom(...ids).map(String),
            fc.constantFrom("", ".0", "e0", " ", "/", "?", "#", "\u0000"),
          )
          .map(([a, b, c]) => a + b + c),
        fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 8 }),
        fc.string({ unit: "binary", minLength: 1, maxLength: 8 }),
      )
      .filter((s) => s !== "." && s !== ".." && s !== "");
    const seen = { found: 0, missing: 0, invalid: 0 };
    await assertProperty(
      fc.asyncProperty(segment, async (petId) => {
        const response = await call(`/v1/pets/${encodeURIComponent(petId)}`, {
          key: keys.petIds,
        });
        expect(response.headers.get("Deprecation")).toMatch(/^@\d+$/);
        expect(response.headers.get("Sunset")).toBe("Thu, 05 Dec 2030 00:00:00 GMT");
        if (/^[1-9][0-9]*$/.test(petId) && BigInt(petId) <= BigInt(MAX)) {
          const row = await env.DB.prepare(
            "SELECT id, name, category_id AS categoryId, status FROM pets WHERE id = ?1",
          )
            .bind(Number(petId))
            .first();
          if (row) {
            seen.found++;
            expect(await bodyOf(response, 200)).toEqual(row);
          } else {
            seen.missing++;
            await expectError(response, 404, "not_found", new RegExp(`petId ${petId}`));
          }
          return;
        }
        seen.invalid++;
        await expectError(response, 400, "invalid_parameter", /"petId"/);
      }),
      RUNS.petIds,
    );
    expect(Math.min(seen.found, seen.missing, seen.invalid)).toBeGreaterThan(0);
  });

  it(`Authorization: generated headers get 200 only for "Bearer <the key>", else 401 with WWW-Authenticate (${RUNS.authorization} cases)`, async () => {
    const key = keys.authorization;
    const BEARER = ["Bearer", "bearer", "BEARER", "bEaReR"];
    const printable = fc.string({ unit: char(0x20, 0x7e), maxLength: 30 });
    const near = [key, key.toUpperCase(), key.slice(0, -1), `${key}=`, `${key}x`, `"${key}"`];
    const token = fc.oneof(
      { weight: 7, arbitrary: fc.constantFrom(...near, "local-dev-key") },
      fc.stringMatching(/^psk_[A-Za-z0-9_-]{43}$/),
      fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,40}=*$/),
      printable,
    );
    const header = fc.oneof(
      fc.constant(undefined),
      fc
        .tuple(
          fc.constantFrom(...BEARER),
          fc.constantFrom(" ", "  ", "   "),
          fc.constantFrom("", " ", "  "),
        )
        .map(([scheme, sep, trail]) => `${scheme}${sep}${key}${trail}`),
      printable,
      fc.string({ unit: "binary-ascii", maxLength: 20 }).map((s) => s.replace(/[\0\r\n]/g, "")),
      fc
        .tuple(
          fc.constantFrom(...BEARER, "Basic", "Token", "Bearer:", "", "Bearer,"),
          fc.constantFrom(" ", "  ", "\t", "", " \t"),
          token,
          fc.constantFrom("", " ", "  ", "\t", ", x"),
        )
        .map(([scheme, sep, t, trail]) => `${scheme}${sep}${t}${trail}`),
    );
    const seen = { ok: 0, challenge: 0, invalidToken: 0 };
    await assertProperty(
      fc.asyncProperty(header, async (value) => {
        const headers: Record<string, string> = value === undefined ? {} : { Authorization: value };
        const response = await call("/v1/pets?limit=1", { headers });
        const sent = (value ?? "").replace(/^[\t ]+|[\t ]+$/g, ""); // what Headers keeps
        const match = /^Bearer +(\S+) *$/i.exec(sent);
        if (match?.[1] === key) {
          seen.ok++;
          expect(Array.isArray(await bodyOf(response, 200))).toBe(true);
          return;
        }
        await expectError(response, 401, "unauthorized");
        const challenge = response.headers.get("WWW-Authenticate");
        if (/^Bearer\s+\S/i.test(sent)) {
          seen.invalidToken++;
          expect(challenge).toBe('Bearer realm="petstore", error="invalid_token"');
        } else if (/^Bearer\s*$/i.test(sent)) {
          // "Bearer" with no token: either challenge is defensible.
          expect(challenge).toMatch(/^Bearer realm="petstore"/);
        } else {
          seen.challenge++;
          expect(challenge).toBe('Bearer realm="petstore"');
        }
      }),
      RUNS.authorization,
    );
    expect(Math.min(...Object.values(seen))).toBeGreaterThan(0);
  });
});
