// The response-conformance check (test/support/conformance.ts) itself: it must refuse
// responses the OpenAPI document does not describe, or it proves nothing in call().
import { describe, expect, it } from "vitest";
import { deprecationHeaders } from "../src/http/deprecation.ts";
import { getPet } from "../src/operations/index.ts";
import { BASE, methodNotOn } from "./helpers.ts";
import { assertConforms } from "./support/conformance.ts";

const PET = { id: 1, name: "Rex", categoryId: 2, status: "available" };
const CREATED = { Location: "/v1/pets/1", ETag: '"tag.2.available"' };
/** Methods the two paths lack (found from the table, not assumed). */
const NOT_ON_PETS = methodNotOn("/pets");
const NOT_ON_PET = methodNotOn("/pets/{petId}");

function json(body: unknown, status: number, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", "X-Request-Id": "r-1", ...headers },
  });
}

function req(method: string, path: string): Request {
  return new Request(`${BASE}${path}`, { method });
}

describe("assertConforms accepts documented responses", () => {
  it("a created Pet with Location (left readable for the caller); a 405 with Allow on a documented path and another method", async () => {
    const created = json(PET, 201, CREATED);
    await assertConforms(req("POST", "/v1/pets"), created);
    expect(await created.json()).toEqual(PET);
    const body = { code: "method_not_allowed", message: "no", status: 405 };
    await assertConforms(req(NOT_ON_PETS, "/v1/pets"), json(body, 405, { Allow: "GET" }));
    // getPet's path: the 405 is the path's response, without getPet's deprecation headers.
    await assertConforms(req(NOT_ON_PET, "/v1/pets/1"), json(body, 405, { Allow: "GET" }));
  });

  it("a Pet with a field it does not know yet: a response may gain fields within /v1", async () => {
    await assertConforms(req("POST", "/v1/pets"), json({ ...PET, colour: "red" }, 201, CREATED));
  });

  it("a removal: 204 without a body", async () => {
    const removed = new Response(null, { status: 204, headers: { "X-Request-Id": "r-1" } });
    await assertConforms(req("DELETE", "/v1/pets/1"), removed);
  });
});

describe("assertConforms refuses", () => {
  it.each([
    [
      "a Pet without its status",
      req("POST", "/v1/pets"),
      json({ ...PET, status: undefined }, 201, CREATED),
      /body: .*status/,
    ],
    [
      "a removal responded with 200 with the pet",
      req("DELETE", "/v1/pets/1"),
      json(PET, 200),
      /status 200 is not documented for deletePet/,
    ],
    [
      "a 201 without the pet's ETag",
      req("POST", "/v1/pets"),
      json(PET, 201, { Location: "/v1/pets/1" }),
      /required header ETag is missing/,
    ],
    [
      "a Pet whose id is a string",
      req("POST", "/v1/pets"),
      json({ ...PET, id: "1" }, 201, CREATED),
      /body: #\/id/,
    ],
    [
      "a 201 without the required Location",
      req("POST", "/v1/pets"),
      json(PET, 201, { ETag: CREATED.ETag }),
      /required header Location is missing/,
    ],
    [
      "a status the operation does not document",
      req("GET", "/v1/pets"),
      json([], 202),
      /status 202 is not documented for listPets/,
    ],
    [
      "a getPet response without its deprecation headers",
      req("GET", "/v1/pets/1"),
      json(PET, 200),
      /required header Deprecation is missing/,
    ],
    [
      "a Sunset header other than the documented one",
      req("GET", "/v1/pets/1"),
      json(PET, 200, {
        ...deprecationHeaders(getPet.deprecation),
        Sunset: "Fri, 06 Dec 2030 00:00:00 GMT",
      }),
      /header Sunset/,
    ],
    [
      "an Error whose code is not documented for that status",
      req("GET", "/v1/pets"),
      json({ code: "not_found", message: "x", status: 400 }, 400),
      /body: .*code/,
    ],
    [
      "a plain-text error on an unknown path",
      req("GET", "/v1/cats"),
      new Response("Not Found", { status: 404, headers: { "X-Request-Id": "r" } }),
      /not application\/json/,
    ],
    [
      "an Error whose status field disagrees with the HTTP status",
      req("GET", "/nowhere"),
      json({ code: "not_found", message: "x", status: 400 }, 404),
      /error status 400 != 404/,
    ],
    [
      "a 405 on a documented path without Allow",
      req(NOT_ON_PET, "/v1/pets/1"),
      json({ code: "method_not_allowed", message: "no", status: 405 }, 405),
      /required header Allow is missing/,
    ],
    [
      "a 405 on a documented path whose Error code is another status's",
      req(NOT_ON_PETS, "/v1/pets"),
      json({ code: "not_found", message: "no", status: 405 }, 405, { Allow: "GET" }),
      /error code not_found does not stand for 405/,
    ],
    [
      "a 401 without WWW-Authenticate",
      req(NOT_ON_PETS, "/v1/pets"),
      json({ code: "unauthorized", message: "x", status: 401 }, 401),
      /required header WWW-Authenticate is missing/,
    ],
    [
      "a response without X-Request-Id",
      req("GET", "/v1/pets"),
      new Response("[]", { status: 200, headers: { "Content-Type": "application/json" } }),
      /X-Request-Id is missing/,
    ],
    [
      "an undocumented media type",
      req("GET", "/v1/openapi.json"),
      new Response("openapi: 3.1.1", {
        status: 200,
        headers: { "Content-Type": "text/yaml", "X-Request-Id": "r" },
      }),
      /Content-Type text\/yaml is not documented/,
    ],
    [
      "a success on a path the document does not have",
      req("GET", "/v1/pets/"),
      json([], 200),
      /undocumented success 200/,
    ],
  ])("%s", async (_name, request, response, message) => {
    await expect(assertConforms(request, response)).rejects.toThrow(message);
  });
});
