// What `npm run dev` seeds into the local database (scripts/dev.ts), as one batch of the
// very statements it sends: local-dev-key, and demo pets enough for the README's first
// curl (`GET /v1/pets?limit=2&status=available`) to show a page with Link: rel="next".
// A second `npm run dev` on the same database adds no pet. The real `npm run dev` is
// exercised by `npm run e2e`.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { SEED_DEMO_PETS_STATEMENT, seedLocalDevKeyStatement } from "../scripts/key-statements.ts";
import { hashApiKey, LOCAL_DEV_KEY } from "../src/auth/keys.ts";
import type { Pet } from "../src/pets/schemas.ts";
import { call } from "./helpers.ts";
import { nextLink } from "./support/requests.ts";

const seed = async () => {
  const statements = [
    seedLocalDevKeyStatement(await hashApiKey(LOCAL_DEV_KEY)),
    SEED_DEMO_PETS_STATEMENT,
  ];
  return env.DB.batch(statements.map((sql) => env.DB.prepare(sql)));
};
const allPets = async () => (await env.DB.prepare("SELECT * FROM pets ORDER BY id").all()).results;

it("a fresh database gets demo pets: the README's first curl shows a page and a next one", async () => {
  expect(await allPets()).toEqual([]); // storage is per file: nothing here yet
  const [, added] = await seed();
  expect(added?.results.length).toBeGreaterThan(2);

  const first = await call("/v1/pets?limit=2&status=available", { key: LOCAL_DEV_KEY });
  expect(first.status).toBe(200);
  expect(first.headers.get("Content-Type")).toMatch(/^application\/json/);
  const page = (await first.json()) as Pet[];
  expect(page).toHaveLength(2);
  for (const pet of page)
    expect(pet).toMatchObject({ status: "available", name: expect.any(String) });
  const next = nextLink(first);
  expect(next, 'Link: rel="next"').toMatch(/\/v1\/pets\?.*cursor=/);
  const second = await call(new URL(next as string).pathname + new URL(next as string).search, {
    key: LOCAL_DEV_KEY,
  });
  expect(second.status).toBe(200);
  expect(((await second.json()) as Pet[]).length).toBeGreaterThan(0);
});

it("a second npm run dev on the same database adds no pet", async () => {
  await seed();
  const before = await allPets();
  expect(before.length).toBeGreaterThan(0);
  const [, added] = await seed();
  expect(added?.results).toEqual([]);
  expect(await allPets()).toEqual(before);
});
