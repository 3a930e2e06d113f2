// What an integrator writes, run by `npm run client:outside` (scripts/client-outside.ts):
// compiled with `tsc --strict` in a project outside this repository that holds only the
// package's tarball and typescript, and run on Node 20 and 24 against a real `npm run dev`,
// directly and through a proxy that injects faults (test/outside/fault-proxy.ts). It exits
// non-zero on the first expectation that fails, or after the fault table if a case failed.
import {
  type Created,
  type Pet,
  PetStoreClient,
  type PetStoreClientOptions,
  PetStoreError,
} from "@petstore/client";

// The project has no @types/node: the little of Node this program reads, declared.
declare const process: { env: Record<string, string | undefined>; version: string };

const baseUrl = setting("PETSTORE_BASE_URL");
const apiKey = setting("PETSTORE_API_KEY");
const readOnlyKey = setting("PETSTORE_READ_ONLY_KEY");
const proxy = setting("PETSTORE_PROXY_URL");
console.log(`node ${process.version}, ${baseUrl}`);

const client = new PetStoreClient({ baseUrl, apiKey, appName: "client-outside/1" });
const run = `${process.version}-${Date.now()}`;
const name = `outside ${run}`;
const created = await client.createPet({ name, categoryId: 1 });
expect(created.pet.name === name && created.pet.status === "available", "the created pet");
expect(created.bookmark !== undefined, "a create returns its bookmark");
await client.createPet({ name: `${name} 2`, categoryId: 2, status: "pending" });
await client.createPet({ name: `${name} 3`, categoryId: 3, status: "sold" });

// Every pet, page after page.
const pets: Pet[] = [];
for await (const pet of client.pets({ limit: 2 })) pets.push(pet);
const sizes: number[] = [];
for await (const page of client.pages({ limit: 2 })) sizes.push(page.pets.length);
const total = sizes.reduce((sum, size) => sum + size, 0);
expect(sizes.length >= 2 && total === pets.length, `${total} pets in pages of ${sizes}`);
expect(
  pets.every((pet, i) => i === 0 || (pets[i - 1] as Pet).id < pet.id),
  "in ascending id order",
);

// Read-your-writes: a consistent client sends the newest bookmark with each read.
const consistent = new PetStoreClient({ baseUrl, apiKey, consistent: true });
const mine = await consistent.createPet({ name: `${name} mine`, categoryId: 4 });
let found = 0;
for await (const pet of consistent.pets({ limit: 100 })) if (pet.id === mine.pet.id) found++;
const newest = consistent.bookmark ?? "";
expect(found === 1 && newest >= (mine.bookmark ?? "~"), "a consistent client reads its write");

// Conditional reads: the ETag of a response, sent back, is "not modified".
const read = await client.getPet(created.pet.id);
const again = await client.getPet(created.pet.id, { ifNoneMatch: read.etag });
expect(again.notModified && again.etag === read.etag, "getPet with its ETag: not modified");
const first = await client.listPets({ limit: 2 });
const samePage = await client.listPets({ limit: 2 }, { ifNoneMatch: first.etag });
expect(samePage.notModified, "a page with its ETag: not modified");

// Error responses.
const stranger = new PetStoreClient({ baseUrl, apiKey: "psk_not-a-key" });
const unauthorized = await failure(stranger.listPets());
expect(unauthorized.status === 401 && unauthorized.code === "unauthorized", "401 unauthorized");
expect(unauthorized.requestId !== undefined, "the 401 names its request id");
const reader = new PetStoreClient({ baseUrl, apiKey: readOnlyKey });
const forbidden = await failure(reader.createPet({ name, categoryId: 1 }));
expect(forbidden.code === "insufficient_scope", "403 insufficient_scope");
expect(forbidden.requiredScope === "pets:write", `it needs ${forbidden.requiredScope}`);
const invalid = await failure(client.createPet({ name: "", categoryId: 0 }));
const fields = invalid.details.map((detail) => detail.field).sort();
expect(invalid.status === 400 && fields.join() === "categoryId,name", `400 on ${fields}`);
const orders = await failure(client.listOrders());
expect(orders.status === 501 && orders.code === "not_implemented", "listOrders: 501");

// Faults through the proxy: what the client did, what the caller saw, the pets of the case's
// name after it and what reached another origin. A case that fails is marked in the table; the
// run fails after it.
const table = [
  "| fault | what the client did | what the caller saw | pets of its name | sent elsewhere |",
  "| --- | --- | --- | --- | --- |",
];
let faultNumber = 0;
let failed = 0;

/**
 * Runs `act` with a client whose requests meet `fault` (test/outside/fault-proxy.ts) the
 * first `times` times; `act` returns what the caller saw. A case must leave `pets` pets of
 * its name (read with the newest bookmark the faulty client received), and no case may send
 * anything to another origin.
 */
async function fault(
  label: string,
  [path, times]: [string, number],
  act: (faulty: PetStoreClient, name: string) => Promise<string>,
  options: { pets?: number; settings?: Partial<PetStoreClientOptions> } = {},
) {
  const retries: string[] = [];
  const tag = `${run}-${++faultNumber}`;
  const faulty = new PetStoreClient({
    baseUrl: `${proxy}/${path}/${times}/${tag}/v1`,
    apiKey,
    onRetry: ({ error, delayMs }) => retries.push(`${error.code} (${seconds(delayMs)})`),
    ...options.settings,
  });
  const petName = `outside fault ${tag}`;
  const started = Date.now();
  const saw = await act(faulty, petName).then(
    (saw) => `${saw} in ${seconds(Date.now() - started)}`,
    (error: unknown) =>
      marked(error instanceof PetStoreError ? seen(error) : (error as Error).message),
  );
  const did = `${retries.length + 1} attempt(s)${retries.length ? `, retried after ${retries.join(", ")}` : ""}`;
  const count = options.pets === undefined ? "-" : await named(petName, faulty.bookmark);
  const elsewhere = (await (await fetch(`${proxy}/elsewhere/${tag}`)).json()) as string[];
  const pets = count === options.pets || count === "-" ? `${count}` : marked(`${count}`);
  const sent = elsewhere.length ? marked(elsewhere.join("; ")) : "nothing";
  table.push(`| ${label} | ${did} | ${saw} | ${pets} | ${sent} |`);
}

/** A case's result that fails: counted, and marked in the table. */
function marked(what: string): string {
  failed++;
  return `**FAILED** ${what.replace(/^FAILED: /, "")}`;
}

/** What a caller sees of a failure of the family, checked to be one. */
async function caught(call: Promise<unknown>): Promise<PetStoreError> {
  const error = await call.then(
    (value) => new Error(`resolved ${JSON.stringify(value)}`),
    (err: unknown) => err,
  );
  expect(error instanceof PetStoreError, `a failure of the one family, not ${error}`);
  return error as PetStoreError;
}

const seen = (error: PetStoreError) =>
  `PetStoreError kind ${error.kind}, ${error.code}${error.status ? ` ${error.status}` : ""}, ${error.attempts} attempt(s)${error.kind === "timeout" ? ` ("${error.message}")` : ""}`;

/**
 * The caller's retry by hand of a create that failed, with the key the failure carries:
 * the first create returned again when the API had made it (`replayed`), else a create.
 */
async function byHand(error: PetStoreError, petName: string, replayed = true): Promise<string> {
  expect(error.idempotencyKey !== undefined, "the failure carries the create's key");
  const retried = await client.createPet(
    { name: petName, categoryId: 1 },
    { idempotencyKey: error.idempotencyKey },
  );
  expect(retried.replayed === replayed, `the retry by hand with that key: replayed ${replayed}`);
  return `${seen(error)} with its Idempotency-Key; retried by hand with it: ${replayed ? "replayed" : "created"}`;
}

const create = async (faulty: PetStoreClient, petName: string) => {
  const { replayed } = await faulty.createPet({ name: petName, categoryId: 1 });
  return `the pet${replayed ? ", replayed" : ""}`;
};
const list = async (faulty: PetStoreClient) =>
  `a page of ${(await faulty.listPets({ limit: 2 })).pets.length} pets`;

/** A create responded with what is not its success (`status`): refused, never retried. */
const refusedCreate =
  (status: number, replayed = true) =>
  async (faulty: PetStoreClient, petName: string) => {
    const error = await caught(faulty.createPet({ name: petName, categoryId: 1 }));
    const what = `unexpected_response ${status}, not retried`;
    expect(error.code === "unexpected_response" && error.status === status, what);
    expect(error.attempts === 1, what);
    return byHand(error, petName, replayed);
  };
/** A page responded with what is not a page (`status`): refused. */
const refusedList = (status: number) => async (faulty: PetStoreClient) => {
  const error = await caught(faulty.listPets({ limit: 2 }));
  const what = `unexpected_response ${status}`;
  expect(error.code === "unexpected_response" && error.status === status, what);
  return seen(error);
};
/** Every attempt's response delayed past a time limit: the timeout names it (`limit`). */
const timedOut = (limit: RegExp) => async (faulty: PetStoreClient, petName: string) => {
  const error = await caught(create(faulty, petName));
  expect(error.kind === "timeout" && limit.test(error.message), `"${error.message}" ${limit}`);
  return byHand(error, petName);
};

await fault("create: response dropped once", ["drop", 1], create, { pets: 1 });
await fault(
  "create: every response dropped",
  ["drop", 9],
  async (faulty, petName) => byHand(await caught(create(faulty, petName)), petName),
  { pets: 1 },
);
await fault("create: body cut short, with Content-Length", ["cut", 1], create, { pets: 1 });
await fault("create: body cut short, no Content-Length", ["cutclose", 1], create, { pets: 1 });
await fault("create: 503, Retry-After: 1, once", ["503r1", 1], create, { pets: 1 });
await fault("listPets: 429, Retry-After: 1, once", ["429r1", 1], list);
await fault("listPets: 429, Retry-After: 60", ["429r60", 9], async (faulty) => {
  const error = await caught(list(faulty));
  expect(
    error.retryAfter === 60 && error.attempts === 1,
    "a wait past the time limit is not waited",
  );
  return `${seen(error)}, retryAfter ${error.retryAfter}`;
});
await fault("listPets: a gateway's 502 once", ["502", 1], list);
await fault("create: 307 to another origin", ["away", 1], refusedCreate(307, false), { pets: 1 });
await fault("listPets: 307 to another origin", ["away", 1], refusedList(307));
await fault("listPets: 308 to the same origin", ["here", 1], refusedList(308));
await fault("create: 200, not 201", ["status200", 1], refusedCreate(200), { pets: 1 });
await fault('create: 201 `{"pets":[]}`, not a pet', ["shape", 1], refusedCreate(201), { pets: 1 });
await fault('listPets: 200 `{"pets":[]}`, not a page', ["shape", 1], refusedList(200));
await fault("listPets: 200 text/html (a captive portal)", ["200", 1], refusedList(200));
await fault("create: response delayed 5 s", ["delay", 1], create, { pets: 1 });
await fault(
  "create: every response delayed 5 s, attemptTimeoutMs 2 s",
  ["delay", 9],
  timedOut(/attempt.*attemptTimeoutMs.*\b2000 ms/),
  { pets: 1, settings: { attemptTimeoutMs: 2_000 } },
);
await fault(
  "create: every response delayed 5 s, timeoutMs 3 s",
  ["delay", 9],
  timedOut(/call.*timeoutMs.*\b3000 ms/),
  { pets: 1, settings: { timeoutMs: 3_000 } },
);

// Changes. A removal whose response is lost is retried, and its 404 then means removed; an
// update is retried, except under ifMatch, where the caller gets the failure and reads again.
// Each leaves one pet of its name: a removal's twin, never removed with it.
const removal = (conditional: boolean) => async (faulty: PetStoreClient, petName: string) => {
  const target = await client.createPet({ name: petName, categoryId: 1 });
  await client.createPet({ name: petName, categoryId: 2 });
  const ifMatch = conditional ? target.etag : undefined;
  const removed = await faulty.deletePet(target.pet.id, { ifMatch });
  expect(
    removed.removed && removed.alreadyGone,
    "removed, alreadyGone: a 404 after a lost response",
  );
  const read = await caught(client.getPet(target.pet.id, { bookmark: removed.bookmark }));
  expect(read.code === "not_found", "the pet is gone");
  return "removed, alreadyGone; the pet gone";
};
const PATCH = { status: "pending", categoryId: 2 } as const;
const update = (conditional: boolean) => async (faulty: PetStoreClient, petName: string) => {
  const created = await client.createPet({ name: petName, categoryId: 1 });
  const ifMatch = conditional ? created.etag : undefined;
  const call = faulty.updatePet(created.pet.id, PATCH, { ifMatch });
  let saw = "the pet as patched";
  if (conditional) {
    const error = await caught(call);
    expect(error.kind === "network" && error.attempts === 1, "under ifMatch: not retried");
    saw = seen(error);
  } else expect((await call).pet.status === PATCH.status, saw);
  // Read again as the README says: an empty patch returns the pet as it is, from the primary.
  const now = await client.updatePet(created.pet.id, {});
  const applied = now.pet.status === PATCH.status && now.pet.categoryId === PATCH.categoryId;
  expect(applied && now.etag !== created.etag, "read again: the patch applied, a new etag");
  return `${saw}; read again: applied once`;
};
/** A change refused with `code` (412 or 409): the typed error, never retried. */
const refusedChange =
  (code: string, change: (faulty: PetStoreClient, created: Created) => Promise<unknown>) =>
  async (faulty: PetStoreClient, petName: string) => {
    const created = await client.createPet({ name: petName, categoryId: 1, status: "sold" });
    const error = await caught(change(faulty, created));
    expect(
      error.code === code && error.kind === "response" && error.attempts === 1,
      `${code}, once`,
    );
    return seen(error);
  };
/** Changes the pet first, so the `etag` of its create is stale. */
const stale = async (created: Created) => {
  await client.updatePet(created.pet.id, { categoryId: 2 });
  return created.etag;
};

await fault("deletePet: response dropped once", ["drop", 1], removal(false), { pets: 1 });
await fault("deletePet, ifMatch: response dropped once", ["drop", 1], removal(true), { pets: 1 });
await fault("updatePet: response dropped once", ["drop", 1], update(false), { pets: 1 });
await fault("updatePet, ifMatch: response dropped once", ["drop", 1], update(true), { pets: 1 });
await fault(
  "updatePet, ifMatch of a changed pet",
  ["pass", 0],
  refusedChange("precondition_failed", async (faulty, created) =>
    faulty.updatePet(created.pet.id, { name: "late" }, { ifMatch: await stale(created) }),
  ),
  { pets: 1 },
);
await fault(
  "deletePet, ifMatch of a changed pet",
  ["pass", 0],
  refusedChange("precondition_failed", async (faulty, created) =>
    faulty.deletePet(created.pet.id, { ifMatch: await stale(created) }),
  ),
  { pets: 1 },
);
await fault(
  "updatePet: sold to available",
  ["pass", 0],
  refusedChange("invalid_transition", (faulty, created) =>
    faulty.updatePet(created.pet.id, { status: "available" }),
  ),
  { pets: 1 },
);
console.log(`\nfaults on node ${process.version}:\n${table.join("\n")}\n`);
if (failed > 0) throw new Error(`FAILED: ${failed} fault case(s), marked in the table above`);

/** How many pets are named `petName`, read directly, at least as fresh as `bookmark`. */
async function named(petName: string, bookmark?: string): Promise<number> {
  let count = 0;
  for await (const pet of client.pets({ limit: 100 }, { bookmark })) {
    if (pet.name === petName) count++;
  }
  return count;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function setting(variable: string): string {
  const value = process.env[variable];
  if (!value) throw new Error(`set ${variable}`);
  return value;
}

function expect(ok: boolean, what: string): void {
  if (!ok) throw new Error(`FAILED: ${what}`);
  console.log(`ok: ${what}`);
}

async function failure(call: Promise<unknown>): Promise<PetStoreError> {
  const error = await caught(call);
  expect(error.kind === "response", `an error response: ${error.code}`);
  return error;
}
