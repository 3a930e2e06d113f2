// The package's types and code as each module system meets them: compiled by
// `npm run client:outside` with the oldest TypeScript the package supports and the newest,
// under node10, node16 (from CommonJS and from ES modules) and bundler resolution, then
// run as CommonJS and as an ES module on Node 20 and 24. Nothing responds at its address.
import { type Pet, PetStoreClient, PetStoreError } from "@petstore/client";

const client = new PetStoreClient({
  baseUrl: "http://127.0.0.1:9/v1",
  apiKey: "psk_none",
  retry: { retries: 0 },
});
// @ts-expect-error a name is a string: the types are the document's, not `any`
void client.createPet({ name: 7, categoryId: 1 }).catch(() => {});
// @ts-expect-error a merge patch changes no id
void client.updatePet(1, { id: 2 }).catch(() => {});
// @ts-expect-error raw knows the document's paths
void client.raw.GET("/animals").catch(() => {});

client.listPets({ limit: 1 }).then(
  (page) => {
    const first: Pet | undefined = page.pets[0];
    throw new Error(`a closed port responded: ${first?.name}`);
  },
  (error: unknown) => {
    if (!(error instanceof PetStoreError) || error.kind !== "network") throw error;
    console.log(`consumer: ${error.code} after ${error.attempts} attempt`);
  },
);
