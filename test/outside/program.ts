// What an integrator writes, run by `npm run client:outside` (scripts/client-outside.ts):
// compiled with `tsc --strict` in a project outside this repository that holds only the
// package's tarball and typescript, and run on the machine's own Node against a real
// `npm run dev`. It exits non-zero on the first expectation that fails.
import { type Pet, PetStoreClient, PetStoreError } from "@petstore/client";

// The project has no @types/node: the little of Node this program reads, declared.
declare const process: { env: Record<string, string | undefined>; version: string };

const baseUrl = setting("PETSTORE_BASE_URL");
const apiKey = setting("PETSTORE_API_KEY");
const readOnlyKey = setting("PETSTORE_READ_ONLY_KEY");
console.log(`node ${process.version}, ${baseUrl}`);

// A create whose first answer is lost after the server answered: the client must retry
// with the same Idempotency-Key and get the first answer back, replayed.
let lost = 0;
const replayedHeaders: Array<string | null> = [];
const client = new PetStoreClient({
  baseUrl,
  apiKey,
  retry: { baseDelayMs: 50 },
  fetch: async (request) => {
    const response = await fetch(request);
    if (request.method !== "POST") return response;
    if (lost++ === 0) {
      await response.body?.cancel();
      throw new TypeError("the connection was lost after the server answered");
    }
    replayedHeaders.push(response.headers.get("Idempotent-Replayed"));
    return response;
  },
});
const name = `outside ${Date.now()}`;
const created = await client.createPet({ name, categoryId: 1 });
expect(created.replayed && replayedHeaders[0] === "true", "a lost create is retried: replayed");
expect(created.pet.name === name && created.pet.status === "available", "the created pet");
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
expect(pets.filter((pet) => pet.name === name).length === 1, "the retried create made one pet");

// Conditional reads: the ETag of an answer, sent back, is "not modified".
const read = await client.getPet(created.pet.id);
const again = await client.getPet(created.pet.id, { ifNoneMatch: read.etag });
expect(again.notModified && again.etag === read.etag, "getPet with its ETag: not modified");
const page = await client.listPets({ limit: 2 });
const samePage = await client.listPets({ limit: 2 }, { ifNoneMatch: page.etag });
expect(samePage.notModified, "a page with its ETag: not modified");

// Errors.
const stranger = new PetStoreClient({ baseUrl, apiKey: "psk_not-a-key" });
const unauthorized = await refusal(stranger.listPets());
expect(unauthorized.status === 401 && unauthorized.code === "unauthorized", "401 unauthorized");
expect(unauthorized.requestId !== undefined, "the 401 names its request id");
const reader = new PetStoreClient({ baseUrl, apiKey: readOnlyKey });
const forbidden = await refusal(reader.createPet({ name, categoryId: 1 }));
expect(forbidden.code === "insufficient_scope", "403 insufficient_scope");
expect(forbidden.requiredScope === "pets:write", `it needs ${forbidden.requiredScope}`);
const invalid = await refusal(client.createPet({ name: "", categoryId: 0 }));
const fields = invalid.details.map((detail) => detail.field).sort();
expect(invalid.status === 400 && fields.join() === "categoryId,name", `400 on ${fields}`);
const orders = await refusal(client.listOrders());
expect(orders.status === 501 && orders.code === "not_implemented", "listOrders: 501");

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

function expect(ok: boolean, what: string): void {
  if (!ok) throw new Error(`FAILED: ${what}`);
  console.log(`ok: ${what}`);
}

async function refusal(call: Promise<unknown>): Promise<PetStoreError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof PetStoreError) return error;
    throw error;
  }
  throw new Error("FAILED: expected an error answer");
}
