// npm run load [-- --url http://127.0.0.1:8787 --creates 1000 --reads 1000 --concurrency 50]
// Drives the locally running service (`npm run dev`) and checks that nothing is
// lost or duplicated under concurrent writes. Only ever targets 127.0.0.1, and
// is bounded in request count and time.
//   1. counts the pets by walking every page (GET /v1/pets, Link rel="next");
//   2. runs `creates` createPet and `reads` reads (list pages, getPet) shuffled,
//      over `concurrency` concurrent connections (each worker has one request
//      in flight); every 10th create is retried with its Idempotency-Key and
//      must replay the same pet;
//   3. walks the pages again and reports 5xx answers, lost writes (created but
//      not listed, or count drift), duplicate ids, and latency percentiles.
// Exits 1 on any 5xx, lost write, duplicate or unexpected status.
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: process.env.LOAD_URL ?? "http://127.0.0.1:8787" },
    key: { type: "string", default: process.env.LOAD_KEY ?? "local-dev-key" },
    creates: { type: "string", default: "1000" },
    reads: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "50" },
    "max-seconds": { type: "string", default: "180" },
    seed: { type: "string", default: String(Date.now() % 1_000_000) },
  },
});

function fail(message: string): never {
  console.error(`load: ${message}`);
  process.exit(2);
}

function bounded(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    fail(`--${name} must be an integer ${min}..${max}`);
  return n;
}

const base = new URL(values.url);
if (base.hostname !== "127.0.0.1" || base.protocol !== "http:") {
  fail(
    `--url must be http://127.0.0.1:<port> (got ${values.url}): load only targets the local service`,
  );
}
const ORIGIN = base.origin;
const KEY = values.key;
// The local rate limit is 10,000 requests a minute per key: stay well below it.
const CREATES = bounded("creates", values.creates, 1, 4_000);
const READS = bounded("reads", values.reads, 0, 4_000);
const CONCURRENCY = bounded("concurrency", values.concurrency, 1, 200);
const MAX_MS = bounded("max-seconds", values["max-seconds"], 10, 600) * 1000;
const REQUEST_TIMEOUT_MS = 15_000;
const RUN = `load-${Date.now().toString(36)}`;

// ------------------------------------------------------------------ helpers

/** Mulberry32: a small seeded generator, so a run's mix can be repeated. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(Number(values.seed));

type Kind = "create" | "replay" | "list" | "get" | "walk";

interface Sample {
  kind: Kind;
  status: number; // 0 = network error or timeout
  ms: number;
}

const samples: Sample[] = [];
const errors: string[] = [];

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

async function send(
  kind: Kind,
  method: string,
  pathAndQuery: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; json: unknown }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${KEY}`, ...options.headers };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const started = performance.now();
  try {
    const response = await fetch(`${ORIGIN}${pathAndQuery}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    samples.push({ kind, status: response.status, ms: performance.now() - started });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      errors.push(`${method} ${pathAndQuery}: ${response.status} with a non-JSON body`);
    }
    return { status: response.status, headers: response.headers, json };
  } catch (err) {
    samples.push({ kind, status: 0, ms: performance.now() - started });
    errors.push(`${method} ${pathAndQuery}: ${err instanceof Error ? err.message : String(err)}`);
    return { status: 0, headers: new Headers(), json: undefined };
  }
}

function nextLink(headers: Headers): string | undefined {
  const link = headers.get("Link");
  const match = link ? /<([^>]+)>\s*;\s*rel="next"/.exec(link) : null;
  if (!match?.[1]) return undefined;
  const url = new URL(match[1], ORIGIN);
  return `${url.pathname}${url.search}`;
}

/** Every pet, by walking the pages of GET /v1/pets (100 a page). */
async function walk(): Promise<Pet[]> {
  const pets: Pet[] = [];
  let next: string | undefined = "/v1/pets?limit=100";
  const deadline = Date.now() + MAX_MS;
  while (next) {
    if (Date.now() > deadline) fail("walking the pages took too long");
    const page = await send("walk", "GET", next);
    if (page.status !== 200 || !Array.isArray(page.json)) {
      fail(`walking the pages: ${next} answered ${page.status}`);
    }
    pets.push(...(page.json as Pet[]));
    next = nextLink(page.headers);
  }
  return pets;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] as number;
}

function latency(kind: Kind | "all", from: Sample[]) {
  const ms = from.map((s) => s.ms).sort((a, b) => a - b);
  const f = (n: number) => Number(n.toFixed(1));
  return {
    kind,
    requests: ms.length,
    p50: f(percentile(ms, 50)),
    p90: f(percentile(ms, 90)),
    p99: f(percentile(ms, 99)),
    max: f(ms.at(-1) ?? Number.NaN),
  };
}

// --------------------------------------------------------------------- run

const up = await fetch(`${ORIGIN}/`, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
if (up?.status !== 200) fail(`no service answers at ${ORIGIN}/ (start it with npm run dev)`);
const auth = await send("list", "GET", "/v1/pets?limit=1");
if (auth.status !== 200) fail(`GET /v1/pets with the key answered ${auth.status}`);
samples.length = 0;

console.log(
  `load: ${ORIGIN}, ${CREATES} creates + ${READS} reads over ${CONCURRENCY} connections (seed ${values.seed}, run ${RUN})`,
);
const before = await walk();

// The mix: creates and reads shuffled together.
const ops: Array<"create" | "list" | "get"> = [
  ...Array.from({ length: CREATES }, () => "create" as const),
  ...Array.from({ length: READS }, (_, i) => (i % 2 === 0 ? ("list" as const) : ("get" as const))),
];
for (let i = ops.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [ops[i], ops[j]] = [ops[j] as (typeof ops)[number], ops[i] as (typeof ops)[number]];
}

const created: Pet[] = [];
const createdIds = new Set<number>();
const duplicateCreates: number[] = [];
const replayMismatches: string[] = [];
const unexpected: string[] = [];
const STATUSES = ["available", "pending", "sold"] as const;
let nextOp = 0;
let createSeq = 0;
const deadline = performance.now() + MAX_MS;
let timedOut = false;

async function create(): Promise<void> {
  const seq = createSeq++;
  const body = {
    name: `${RUN}-${seq}`,
    categoryId: 1 + Math.floor(random() * 1000),
    status: STATUSES[seq % 3],
  };
  // Half the creates carry an Idempotency-Key; every 10th is retried with it.
  const idempotencyKey = seq % 2 === 0 ? `${RUN}-${seq}` : undefined;
  const headers: Record<string, string> = idempotencyKey
    ? { "Idempotency-Key": idempotencyKey }
    : {};
  const response = await send("create", "POST", "/v1/pets", { body, headers });
  if (response.status !== 201) {
    unexpected.push(`create ${seq}: ${response.status}`);
    return;
  }
  const pet = response.json as Pet;
  if (createdIds.has(pet.id)) duplicateCreates.push(pet.id);
  createdIds.add(pet.id);
  created.push(pet);
  if (idempotencyKey && seq % 10 === 0) {
    const replay = await send("replay", "POST", "/v1/pets", { body, headers });
    const same = JSON.stringify(replay.json) === JSON.stringify(pet);
    if (replay.status !== 201 || replay.headers.get("Idempotent-Replayed") !== "true" || !same) {
      replayMismatches.push(
        `create ${seq}: replay ${replay.status} ${JSON.stringify(replay.json)}`,
      );
    }
  }
}

async function list(): Promise<void> {
  const limit = 1 + Math.floor(random() * 100);
  const status = random() < 0.3 ? `&status=${STATUSES[Math.floor(random() * 3)]}` : "";
  const first = await send("list", "GET", `/v1/pets?limit=${limit}${status}`);
  if (first.status !== 200) {
    unexpected.push(`list: ${first.status}`);
    return;
  }
  // Half the time, follow one page further (a cursor issued under load).
  const next = nextLink(first.headers);
  if (next && random() < 0.5) {
    const second = await send("list", "GET", next);
    if (second.status !== 200) unexpected.push(`list next: ${second.status}`);
  }
}

async function get(): Promise<void> {
  const pool = created.length > 0 ? created : before;
  const pet = pool[Math.floor(random() * pool.length)];
  if (!pet) return list();
  const response = await send("get", "GET", `/v1/pets/${pet.id}`);
  if (response.status !== 200 || JSON.stringify(response.json) !== JSON.stringify(pet)) {
    unexpected.push(`get ${pet.id}: ${response.status}`);
  }
}

async function worker(): Promise<void> {
  for (;;) {
    if (performance.now() > deadline) {
      timedOut = true;
      return;
    }
    const op = ops[nextOp++];
    if (op === undefined) return;
    if (op === "create") await create();
    else if (op === "list") await list();
    else await get();
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
const elapsedS = (performance.now() - started) / 1000;
const runSamples = samples.filter((s) => s.kind !== "walk");

const after = await walk();

// ------------------------------------------------------------------ checks

const afterIds = new Set(after.map((p) => p.id));
const duplicateIds = after.length - afterIds.size;
const lost = created.filter((p) => !afterIds.has(p.id)).map((p) => p.id);
const beforeIds = new Set(before.map((p) => p.id));
const vanished = before.filter((p) => !afterIds.has(p.id)).map((p) => p.id);
const ours = after.filter((p) => p.name.startsWith(`${RUN}-`));
const oursByName = new Map<string, number>();
for (const p of ours) oursByName.set(p.name, (oursByName.get(p.name) ?? 0) + 1);
const duplicateNames = [...oursByName.values()].filter((n) => n > 1).length;
const strangers = after.filter((p) => !beforeIds.has(p.id) && !createdIds.has(p.id)).length;
const countDrift = after.length - before.length - created.length - strangers;
const unordered = after.some((p, i) => i > 0 && p.id <= (after[i - 1] as Pet).id);

const byStatus: Record<string, number> = {};
for (const s of runSamples) byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
const fiveXX =
  runSamples.filter((s) => s.status >= 500).length +
  samples.filter((s) => s.kind === "walk" && s.status >= 500).length;

const report = {
  target: ORIGIN,
  concurrency: CONCURRENCY,
  creates: {
    planned: CREATES,
    created: created.length,
    replaysChecked: samples.filter((s) => s.kind === "replay").length,
  },
  reads: runSamples.filter((s) => s.kind === "list" || s.kind === "get").length,
  requests: runSamples.length,
  seconds: Number(elapsedS.toFixed(2)),
  requestsPerSecond: Number((runSamples.length / elapsedS).toFixed(1)),
  statuses: byStatus,
  fiveXX,
  networkErrors: runSamples.filter((s) => s.status === 0).length,
  petsBefore: before.length,
  petsAfter: after.length,
  lostWrites: lost.length + vanished.length,
  countDrift,
  duplicateIdsInListing: duplicateIds,
  duplicateIdsFromCreates: duplicateCreates.length,
  duplicateNames,
  replayMismatches: replayMismatches.length,
  unexpectedAnswers: unexpected.length,
  listingOrdered: !unordered,
  timedOut,
};

console.table(
  (["create", "replay", "list", "get"] as const)
    .map((kind) =>
      latency(
        kind,
        runSamples.filter((s) => s.kind === kind),
      ),
    )
    .concat(latency("all", runSamples)),
);
console.log(JSON.stringify(report, null, 2));
for (const line of [...errors, ...unexpected, ...replayMismatches].slice(0, 20))
  console.error(`  ${line}`);

const ok =
  fiveXX === 0 &&
  report.networkErrors === 0 &&
  report.lostWrites === 0 &&
  countDrift === 0 &&
  duplicateIds === 0 &&
  duplicateCreates.length === 0 &&
  duplicateNames === 0 &&
  replayMismatches.length === 0 &&
  unexpected.length === 0 &&
  created.length === CREATES &&
  !unordered &&
  !timedOut;
console.log(ok ? "load: PASS" : "load: FAIL");
process.exitCode = ok ? 0 : 1;
