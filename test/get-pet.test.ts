// GET /v1/pets/{petId}: deprecated (RFC 9745), sunset (RFC 8594) on 2030-12-05.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { GET_PET_SUNSET_AT } from "../src/config.ts";
import {
  call,
  createCheckedApp,
  createPetVia,
  expectDeprecationHeaders,
  expectError,
  makeRequest,
} from "./helpers.ts";
import { type RefusalChecker, refusalChecker, SQL_PAYLOADS } from "./support/requests.ts";

let key: string;
let checker: RefusalChecker;
let pet: { id: number; name: string; categoryId: number; status: string };

beforeAll(async () => {
  checker = await refusalChecker("get-pet");
  key = checker.key;
  pet = await createPetVia(key, {
    name: "Ünïcødé 🐈",
    categoryId: 9007199254740991,
    status: "sold",
  });
});

describe("before the sunset", () => {
  it("200: the pet exactly as created, with the deprecation headers", async () => {
    const response = await call(`/v1/pets/${pet.id}`, { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(pet);
    expectDeprecationHeaders(response);
  });

  it("404 not_found for a well-formed id that does not exist, with the headers", async () => {
    const response = await call("/v1/pets/9007199254740991", { key });
    await expectError(response, 404, "not_found", /9007199254740991/);
    expectDeprecationHeaders(response);
  });

  it.each(
    [
      ...["0", "-1", "abc", "1.5", "1.0", "01", "1e3", "0x10", "9007199254740992", "%20", "%20%31"],
      ...["99999999999999999999", "1".repeat(5_000), "1%00", "%EF%BC%91"],
      ...[...SQL_PAYLOADS, "1--", "1/**/", "1;", "1 ", "1'"].map(encodeURIComponent),
    ].map((petId) => ({ petId, shown: petId.slice(0, 30) })),
  )(
    "400 for petId=$shown, before the database, naming petId, with the headers",
    async ({ petId }) => {
      const path = `/v1/pets/${petId}`;
      const { body, response } = await checker.expectRefused(
        path,
        400,
        "invalid_parameter",
        /"petId"/,
      );
      expect(body.details).toEqual([{ field: "petId", message: expect.any(String) }]);
      expect(body.message).toBe(`Path parameter "petId" ${body.details?.[0]?.message}.`);
      // A value that is not a number is not told it is too large.
      if (!/^[1-9][0-9]*$/.test(petId)) expect(body.message).not.toMatch(/at most/);
      expectDeprecationHeaders(response);
    },
  );

  it("treats a trailing slash as an unknown path", async () => {
    await expectError(await call("/v1/pets/", { key }), 404, "not_found");
  });
});

describe("the sunset switch (injected clock)", () => {
  /** `path` served by an app whose clock reads `ms`, with the key unless `key` is null. */
  async function at(ms: number, path: string, withKey: string | null = key): Promise<Response> {
    const app = createCheckedApp({ clock: () => ms, log: () => {} });
    return app.fetch(makeRequest(path, { key: withKey }), env);
  }

  it("still responds with 200 one millisecond before Thu, 05 Dec 2030 00:00:00 GMT", async () => {
    const response = await at(GET_PET_SUNSET_AT * 1000 - 1, `/v1/pets/${pet.id}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(pet);
    expectDeprecationHeaders(response);
  });

  it("responds with 410 gone from the sunset instant on, naming the replacement, not cacheable", async () => {
    for (const ms of [GET_PET_SUNSET_AT * 1000, Date.UTC(2031, 0, 1)]) {
      const response = await at(ms, `/v1/pets/${pet.id}`);
      await expectError(response, 410, "gone", /GET \/v1\/pets with the status filter/);
      expect(response.headers.get("Cache-Control")).toBe("no-store");
      expectDeprecationHeaders(response);
    }
  });

  it("still authenticates first after the sunset", async () => {
    const response = await at(GET_PET_SUNSET_AT * 1000, `/v1/pets/${pet.id}`, null);
    await expectError(response, 401, "unauthorized");
    expect(response.headers.get("Deprecation")).toBeNull();
  });

  it("leaves the other operations alone after the sunset", async () => {
    const response = await at(GET_PET_SUNSET_AT * 1000, "/v1/pets?limit=1");
    expect(response.status).toBe(200);
    expect(response.headers.get("Deprecation")).toBeNull();
  });
});
