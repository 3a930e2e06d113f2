// npm run load: concurrent creates and reads against the running `npm run dev` (127.0.0.1
// only), then every page walked again: nothing accepted is lost or duplicated; then rounds
// of clients changing one pet at once with If-Match (one wins per version, the rest 412,
// every change kept in order) and removing one pet at once (one 204, the rest 404).
// Settings (environment): LOAD_URL (http://127.0.0.1:8787), LOAD_KEY (local-dev-key),
// LOAD_CREATES (1000), LOAD_READS (1000), LOAD_CONCURRENCY (50), LOAD_CHANGERS (20 clients
// changing one pet), LOAD_CHANGE_ROUNDS (25), LOAD_REMOVALS (10 pets removed at once),
// LOAD_SEED (a fast-check seed, to repeat a run's mix). Bounded in count and by the
// project's test timeout.
import fc from "fast-check";
import LinkHeader from "http-link-header";
import { quantileSorted } from "simple-statistics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod/mini";
import { LOCAL_DEV_KEY } from "../../src/auth/keys.ts";
import type { Pet } from "../../src/pets/schemas.ts";
import { allPets } from "./dev-server.ts";

/** A whole number from `min` to `max`, `fallback` when unset. */
const count = (min: number, max: number, fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.minimum(min), z.maximum(max)), fallback);
const settings = z
  .object({
    LOAD_URL: z._default(
      z.url({ protocol: /^http$/, hostname: /^127\.0\.0\.1$/ }),
      "http://127.0.0.1:8787",
    ),
    LOAD_KEY: z._default(z.string(), LOCAL_DEV_KEY),
    // The local rate limit is 10,000 requests a minute per key: stay well below it.
    LOAD_CREATES: count(1, 4_000, 1_000),
    LOAD_READS: count(0, 4_000, 1_000),
    LOAD_CONCURRENCY: count(1, 200, 50),
    LOAD_CHANGERS: count(2, 200, 20),
    LOAD_CHANGE_ROUNDS: count(1, 200, 25),
    LOAD_REMOVALS: count(1, 100, 10),
    LOAD_SEED: z._default(z.coerce.number().check(z.int()), Date.now() % 1_000_000),
  })
  .parse(process.env);
const ORIGIN = new URL(settings.LOAD_URL).origin;
const RUN = `load-${Date.now().toString(36)}`;
const STATUSES = ["available", "pending", "sold"] as const;

/** `get+bookmark`: getPet for the tag to change, with the last change's bookmark. */
type Kind = "create" | "replay" | "list" | "get" | "get+bookmark" | "change" | "remove";
const latencies: Record<Kind, number[]> = {
  create: [],
  replay: [],
  list: [],
  get: [],
  "get+bookmark": [],
  change: [],
  remove: [],
};
/** Responses other than the one expected (a 5xx, a network error, a wrong body). */
const unexpected: string[] = [];

async function send(kind: Kind | "walk", path: string, init: RequestInit = {}) {
  const started = performance.now();
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${settings.LOAD_KEY}`);
  if (init.body && !headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  const url = new URL(path, ORIGIN);
  expect(url.origin, "a link to another origin").toBe(ORIGIN);
  const response = await fetch(url, {
    ...init,
    headers,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  const json = (text ? JSON.parse(text) : undefined) as unknown;
  if (kind !== "walk") latencies[kind].push(performance.now() - started);
  const next = LinkHeader.parse(response.headers.get("Link") ?? "").rel("next")[0]?.uri;
  return { status: response.status, headers: response.headers, json, next };
}

const walk = () => allPets(ORIGIN, settings.LOAD_KEY);

/** The mix: creates and reads shuffled, each with its own random choices (seeded). */
const ops = [
  ...Array.from({ length: settings.LOAD_CREATES }, (_, seq) => ({ kind: "create", seq })),
  ...Array.from({ length: settings.LOAD_READS }, (_, seq) => ({
    kind: seq % 2 ? "get" : "list",
    seq,
  })),
];
const seeded = { seed: settings.LOAD_SEED, numRuns: 1 };
const [order = []] = fc.sample(fc.shuffledSubarray(ops, { minLength: ops.length }), seeded);
const choices = fc.sample(
  fc.record({
    categoryId: fc.integer({ min: 1, max: 1000 }),
    limit: fc.integer({ min: 1, max: 100 }),
    status: fc.option(fc.constantFrom(...STATUSES), { freq: 2 }),
    follow: fc.boolean(),
    pick: fc.nat(),
  }),
  { ...seeded, numRuns: ops.length },
);
const plan = order.map((op, i) => ({ ...op, ...(choices[i] as (typeof choices)[number]) }));
type Op = (typeof plan)[number];

let before: Pet[] = [];
const created: Pet[] = [];
const replays: Array<{ pet: Pet; replay: unknown; status: number; replayed: string | null }> = [];

beforeAll(async () => {
  const up = await fetch(`${ORIGIN}/`).catch(() => undefined);
  expect(up?.status, `no service responds at ${ORIGIN}/ (start it with npm run dev)`).toBe(200);
  expect((await send("walk", "/v1/pets?limit=1")).status, "the key is refused").toBe(200);
  before = await walk();
});

afterAll(() => {
  const ms = (sorted: number[], p: number) =>
    sorted.length ? Number(quantileSorted(sorted, p).toFixed(1)) : NaN;
  console.table(
    Object.fromEntries(
      Object.entries(latencies).map(([kind, samples]) => {
        const sorted = samples.toSorted((a, b) => a - b);
        const row = { requests: sorted.length, p50: ms(sorted, 0.5), p90: ms(sorted, 0.9) };
        return [kind, { ...row, p99: ms(sorted, 0.99), max: ms(sorted, 1) }];
      }),
    ),
  );
});

async function run(op: Op): Promise<void> {
  if (op.kind === "create") {
    const body = JSON.stringify({
      name: `${RUN}-${op.seq}`,
      categoryId: op.categoryId,
      status: STATUSES[op.seq % 3],
    });
    // Half the creates carry an Idempotency-Key; every 10th is sent again with it.
    const headers = op.seq % 2 === 0 ? { "Idempotency-Key": `${RUN}-${op.seq}` } : undefined;
    const response = await send("create", "/v1/pets", { method: "POST", body, headers });
    if (response.status !== 201)
      return void unexpected.push(`create ${op.seq}: ${response.status}`);
    created.push(response.json as Pet);
    if (headers && op.seq % 10 === 0) {
      const again = await send("replay", "/v1/pets", { method: "POST", body, headers });
      const replayed = again.headers.get("Idempotent-Replayed");
      replays.push({
        pet: response.json as Pet,
        replay: again.json,
        status: again.status,
        replayed,
      });
    }
  } else if (op.kind === "list") {
    const status = op.status ? `&status=${op.status}` : "";
    const first = await send("list", `/v1/pets?limit=${op.limit}${status}`);
    if (first.status !== 200) return void unexpected.push(`list: ${first.status}`);
    // Half the time, one page further: a cursor issued under load.
    const next = first.next && op.follow ? await send("list", first.next) : undefined;
    if (next && next.status !== 200) unexpected.push(`list next: ${next.status}`);
  } else {
    const pool = created.length > 0 ? created : before;
    const pet = pool[op.pick % Math.max(1, pool.length)];
    if (!pet) return;
    const response = await send("get", `/v1/pets/${pet.id}`);
    if (response.status !== 200) unexpected.push(`get ${pet.id}: ${response.status}`);
    else expect(response.json).toEqual(pet);
  }
}

describe(`load on ${ORIGIN} (seed ${settings.LOAD_SEED})`, () => {
  it(`${settings.LOAD_CREATES} creates and ${settings.LOAD_READS} reads over ${settings.LOAD_CONCURRENCY} connections: every response as expected`, async () => {
    const queue = [...plan];
    const worker = async () => {
      for (let op = queue.shift(); op; op = queue.shift()) {
        await run(op).catch((err: Error) => unexpected.push(`${op?.kind}: ${err.message}`));
      }
    };
    await Promise.all(Array.from({ length: settings.LOAD_CONCURRENCY }, worker));
    expect(unexpected.length, unexpected.slice(0, 20).join("\n")).toBe(0);
    expect(created).toHaveLength(settings.LOAD_CREATES);
    expect(new Set(created.map((p) => p.id)).size, "two creates returned one id").toBe(
      created.length,
    );
  });

  it("a create sent again with its Idempotency-Key is replayed: the same pet", () => {
    expect(replays.length).toBeGreaterThan(0);
    for (const { pet, replay, status, replayed } of replays) {
      expect({ status, replayed, replay }).toEqual({ status: 201, replayed: "true", replay: pet });
    }
  });

  it("afterwards every page lists each pet once, in id order: nothing lost, nothing added", async () => {
    const after = await walk();
    const ids = after.map((p) => p.id);
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    const listed = new Set(ids);
    const missing = (pets: Pet[]) => pets.filter((p) => !listed.has(p.id));
    expect({ vanished: missing(before), notListed: missing(created) }).toEqual({
      vanished: [],
      notListed: [],
    });
    const ours = after.filter((p) => p.name.startsWith(`${RUN}-`));
    expect(ours, "pets of this run that no create returned").toHaveLength(created.length);
  });
});

describe(`concurrent changes on ${ORIGIN}`, () => {
  const clients = Array.from({ length: settings.LOAD_CHANGERS }, (_, client) => client);
  const bookmarked = (bookmark: string | null): Record<string, string> =>
    bookmark ? { "x-d1-bookmark": bookmark } : {};
  /** A pet of this describe's own, and the bookmark of its create. */
  async function newPet(name: string) {
    const body = JSON.stringify({ name, categoryId: 1 });
    const response = await send("create", "/v1/pets", { method: "POST", body });
    expect(response.status).toBe(201);
    return { pet: response.json as Pet, bookmark: response.headers.get("x-d1-bookmark") };
  }
  /** How many responses had each status, e.g. `{ 200: 1, 412: 19 }`. */
  function tally(statuses: number[]) {
    const counts: Record<number, number> = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  }

  it(`${settings.LOAD_CHANGE_ROUNDS} rounds of ${settings.LOAD_CHANGERS} clients reading one pet's ETag and changing it at once with If-Match: one 200 per version, the rest 412, every change kept in order`, async () => {
    let { pet: last, bookmark } = await newPet(`changing ${RUN}`);
    const first = last;
    for (let round = 1; round <= settings.LOAD_CHANGE_ROUNDS; round++) {
      // Every client reads the last winner's pet (its bookmark: never an older copy)...
      const reads = await Promise.all(
        clients.map(() =>
          send("get+bookmark", `/v1/pets/${last.id}`, { headers: bookmarked(bookmark) }),
        ),
      );
      expect(
        reads.map((r) => [r.status, r.json]),
        `round ${round}: the last change, seen`,
      ).toEqual(clients.map(() => [200, last]));
      // ...then all change it at once from that tag: the counter, and a name of its own.
      const changes = await Promise.all(
        clients.map((client, i) => {
          const seen = reads[i]?.json as Pet;
          const patch = {
            name: `changing ${RUN} #${round} by ${client}`,
            categoryId: seen.categoryId + 1,
          };
          const headers = {
            "Content-Type": "application/merge-patch+json",
            "If-Match": reads[i]?.headers.get("ETag") ?? "",
          };
          return send("change", `/v1/pets/${last.id}`, {
            method: "PATCH",
            headers,
            body: JSON.stringify(patch),
          }).then((response) => ({ patch, response }));
        }),
      );
      const statuses = changes.map((c) => c.response.status);
      expect(tally(statuses), `round ${round}`).toEqual({ 200: 1, 412: clients.length - 1 });
      for (const { response } of changes.filter((c) => c.response.status === 412)) {
        expect(response.json).toMatchObject({ code: "precondition_failed", status: 412 });
      }
      const won = changes.find((c) => c.response.status === 200);
      expect(won?.response.json).toEqual({ ...last, ...won?.patch });
      last = won?.response.json as Pet;
      bookmark = won?.response.headers.get("x-d1-bookmark") ?? null;
    }
    // Nothing lost: the counter went up once per round, and the pet is the last winner's.
    expect(last.categoryId).toBe(first.categoryId + settings.LOAD_CHANGE_ROUNDS);
    const final = await send("get+bookmark", `/v1/pets/${last.id}`, {
      headers: bookmarked(bookmark),
    });
    expect({ status: final.status, json: final.json }).toEqual({ status: 200, json: last });
  });

  it(`${settings.LOAD_REMOVALS} pets, each removed by ${settings.LOAD_CHANGERS} clients at once: one 204, the rest 404, then gone`, async () => {
    for (let n = 0; n < settings.LOAD_REMOVALS; n++) {
      const { pet } = await newPet(`removing ${RUN} ${n}`);
      const removals = await Promise.all(
        clients.map(() => send("remove", `/v1/pets/${pet.id}`, { method: "DELETE" })),
      );
      expect(tally(removals.map((r) => r.status)), `pet ${pet.id}`).toEqual({
        204: 1,
        404: clients.length - 1,
      });
      for (const refused of removals.filter((r) => r.status === 404)) {
        expect(refused.json).toMatchObject({ code: "not_found", status: 404 });
      }
      const removed = removals.find((r) => r.status === 204);
      expect(removed?.json).toBeUndefined();
      const bookmark = removed?.headers.get("x-d1-bookmark") ?? null;
      const after = await send("get+bookmark", `/v1/pets/${pet.id}`, {
        headers: bookmarked(bookmark),
      });
      expect(after.status).toBe(404);
    }
  });
});
