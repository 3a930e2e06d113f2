// What the client lets a caller and the API's operators see: the application's name in
// X-Client-Name (sent, allowed by CORS, logged), each retry through onRetry, and a
// one-time notice naming getPet's sunset. This file's module state is its own, so the
// notice test is the first getPet of the process.
import { afterEach, describe, expect, it, vi } from "vitest";
import clientPackage from "../../packages/client/package.json" with { type: "json" };
import { CLIENT_NAME, PetStoreClient, type RetryEvent } from "../../packages/client/src/index.ts";
import { GET_PET_SUNSET_AT } from "../../src/config.ts";
import type { LogLine } from "../../src/log.ts";
import { BASE, call, createCheckedApp, createKey, createPetVia, workerFetch } from "../helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("X-Client-Name", () => {
  it("names the application and this package; the API logs it and lets browsers send it", async () => {
    expect(CLIENT_NAME).toBe(`petstore-client/${clientPackage.version}`);
    const lines: LogLine[] = [];
    const app = createCheckedApp({ log: (line) => lines.push(line) });
    const { key } = await createKey("client-name");
    const sent: Request[] = [];
    const fetch = (request: Request) => {
      sent.push(request.clone());
      return app.fetch(request);
    };
    const named = new PetStoreClient({
      baseUrl: `${BASE}/v1`,
      apiKey: key,
      fetch,
      appName: "shop-web/2.1",
    });
    const anonymous = new PetStoreClient({ baseUrl: `${BASE}/v1`, apiKey: key, fetch });
    await named.listPets({ limit: 1 });
    await anonymous.listPets({ limit: 1 });
    const names = [`shop-web/2.1 ${CLIENT_NAME}`, CLIENT_NAME];
    expect(sent.map((request) => request.headers.get("X-Client-Name"))).toEqual(names);
    expect(lines.map(({ msg, status, client }) => [msg, status, client])).toEqual(
      names.map((name) => ["request", 200, name]),
    );

    const preflight = await call("/v1/pets", {
      method: "OPTIONS",
      headers: {
        Origin: "https://shop.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization,x-client-name",
      },
    });
    expect(preflight.status).toBe(204);
    const allowed = preflight.headers.get("Access-Control-Allow-Headers") ?? "";
    expect(allowed.split(", ")).toContain("X-Client-Name");
  });

  it("a name that would make the header other than 1 to 200 printable ASCII characters is refused when the client is made", async () => {
    const sent: Request[] = [];
    const make = (appName: string) => () =>
      new PetStoreClient({
        baseUrl: `${BASE}/v1`,
        apiKey: "psk_x",
        appName,
        fetch: async (request) => {
          sent.push(request);
          return workerFetch(request);
        },
      });
    const longest = "a".repeat(199 - CLIENT_NAME.length);
    const refused = [
      "ü",
      "shop\tweb",
      "shop\r\nX-Injected: 1",
      "",
      " shop",
      "shop ",
      `${longest}a`,
    ];
    for (const appName of [...refused, "a".repeat(300)]) {
      expect(make(appName)).toThrow(
        new TypeError(
          `appName: 1 to 178 printable ASCII characters, no space at either end, e.g. shop-web/2.1 (X-Client-Name carries it before "${CLIENT_NAME}", at most 200 characters in all)`,
        ),
      );
    }
    const accepted = ["x", "shop-web/2.1 (build 7)", "~!", longest];
    for (const appName of accepted)
      await make(appName)()
        .listPets()
        .catch(() => {});
    const names = sent.map((request) => request.headers.get("X-Client-Name"));
    expect(names).toEqual(accepted.map((appName) => `${appName} ${CLIENT_NAME}`));
    expect(names.at(-1)).toHaveLength(200);
  });

  it("the API logs at most 200 characters of it", async () => {
    const lines: LogLine[] = [];
    const app = createCheckedApp({ log: (line) => lines.push(line) });
    await app.fetch(new Request(`${BASE}/`, { headers: { "X-Client-Name": "x".repeat(5000) } }));
    expect(lines[0]?.client).toBe("x".repeat(200));
  });
});

describe("onRetry", () => {
  it("sees each retry of a call: the attempt, the failure, the wait", async () => {
    const { key } = await createKey("on-retry");
    const events: RetryEvent[] = [];
    let unavailable = 1;
    const client = new PetStoreClient({
      baseUrl: `${BASE}/v1`,
      apiKey: key,
      retry: { baseDelayMs: 1 },
      onRetry: (event) => events.push(event),
      fetch: async (request) => {
        const response = await workerFetch(request);
        if (unavailable-- <= 0) return response;
        const body = { code: "service_unavailable", message: "later", status: 503 };
        return Response.json(body, { status: 503, headers: { "Retry-After": "0" } });
      },
    });
    const page = await client.listPets({ limit: 1 });
    expect(page.notModified).toBe(false);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ attempt: 1, delayMs: 0 });
    expect(events[0]?.error).toMatchObject({
      kind: "response",
      code: "service_unavailable",
      status: 503,
    });
    expect(events[0]?.request.url).toBe(`${BASE}/v1/pets?limit=1`);
  });
});

describe("getPet's deprecation", () => {
  it("is noticed once, at run time, with its sunset and its successor", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { key } = await createKey("deprecation-notice");
    const pet = (await createPetVia(key, { name: "Noticed", categoryId: 1 })) as { id: number };
    const client = new PetStoreClient({ baseUrl: `${BASE}/v1`, apiKey: key, fetch: workerFetch });
    await client.listPets({ limit: 1 });
    expect(warn).not.toHaveBeenCalled();
    await client.getPet(pet.id);
    await client.getPet(pet.id);
    await new PetStoreClient({ baseUrl: `${BASE}/v1`, apiKey: key, fetch: workerFetch }).raw.GET(
      "/pets/{petId}",
      { params: { path: { petId: pet.id } } },
    );
    const sunset = new Date(GET_PET_SUNSET_AT * 1000).toUTCString();
    expect(warn.mock.calls).toEqual([
      [
        expect.stringMatching(
          new RegExp(
            `^@petstore/client: GET /v1/pets/${pet.id} is deprecated\\. From its sunset, ${sunset}, the API responses it 410 gone\\. Its successor: /v1/pets\\. See /v1/docs#\\S+\\.$`,
          ),
        ),
      ],
    ]);
  });
});
