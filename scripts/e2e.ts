// npm run e2e
// End to end against a real `npm run dev` (wrangler dev, local D1 in a temporary
// directory) on 127.0.0.1 only: the seeded `local-dev-key` lists, creates and
// fetches pets; a key issued with `npm run keys -- create` works; once revoked
// with `npm run keys -- revoke <id>` it is refused with 401 within 60 seconds;
// restricted keys (scopes, expiry, rotation, list --json) through the real CLI.
// Bounded in time; stops the server (its whole process group) however it ends.
import { check, type DevServer, Failure, npm, runBounded, startDevServer } from "./dev-server.ts";

const PORT = Number(process.env.E2E_PORT ?? 8791);
const LOCAL_DEV_KEY = "local-dev-key";
/** decisions.md: a revoked key is refused at once or within 60 seconds at most. */
const REVOCATION_BOUND_MS = 60_000;
const TOTAL_TIMEOUT_MS = 300_000;

let server: DevServer | undefined;
let BASE = "";

function log(message: string): void {
  console.log(`[e2e] ${message}`);
}

async function request(
  method: string,
  pathname: string,
  key: string | null,
  body?: unknown,
): Promise<{ status: number; headers: Headers; json: unknown }> {
  const headers: Record<string, string> = {};
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${BASE}${pathname}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Failure(
      `${method} ${pathname}: ${response.status} with a non-JSON body: ${text.slice(0, 200)}`,
    );
  }
  return { status: response.status, headers: response.headers, json };
}

function errorCode(json: unknown): unknown {
  return (json as { code?: unknown } | null)?.code;
}

async function main(): Promise<void> {
  log(`starting npm run dev on 127.0.0.1:${PORT} with a temporary local D1`);
  server = await startDevServer(PORT, { label: "e2e" });
  BASE = server.base;
  log(`server is up on ${BASE}, local D1 in ${server.persistTo}`);

  // The seeded local key: list, create, fetch.
  const unauthenticated = await request("GET", "/v1/pets", null);
  check(unauthenticated.status === 401, `no key: expected 401, got ${unauthenticated.status}`);
  const list = await request("GET", "/v1/pets?limit=5", LOCAL_DEV_KEY);
  check(list.status === 200 && Array.isArray(list.json), `list: ${list.status}`);
  const name = `e2e-${Date.now()}`;
  const created = await request("POST", "/v1/pets", LOCAL_DEV_KEY, { name, categoryId: 7 });
  const pet = created.json as { id: number; name: string; categoryId: number; status: string };
  check(created.status === 201, `create: expected 201, got ${created.status}`);
  check(pet.name === name && pet.categoryId === 7 && pet.status === "available", "create: body");
  const location = created.headers.get("Location");
  check(location === `/v1/pets/${pet.id}`, `create: Location ${location}`);
  const fetched = await request("GET", location, LOCAL_DEV_KEY);
  check(fetched.status === 200, `getPet: expected 200, got ${fetched.status}`);
  check(JSON.stringify(fetched.json) === JSON.stringify(pet), "getPet: not the created pet");
  check(fetched.headers.get("Deprecation")?.startsWith("@"), "getPet: Deprecation header");
  const listed = await request("GET", "/v1/pets?limit=100", LOCAL_DEV_KEY);
  check(
    (listed.json as Array<{ id: number }>).some((p) => p.id === pet.id),
    "list: the created pet is missing",
  );
  log(`local-dev-key lists, creates (id ${pet.id}) and fetches pets`);

  // A key issued by the CLI, used, then revoked by the CLI.
  const createOutput = await keys("create", "--label", "e2e");
  const lines = createOutput.trimEnd().split("\n");
  const key = lines.at(-1)?.trim() ?? "";
  check(
    /^psk_[A-Za-z0-9_-]{65}$/.test(key),
    `keys create: last line is not a key: ${JSON.stringify(lines.at(-1))}`,
  );
  const id = /Created key id (\d+)/.exec(createOutput)?.[1];
  check(id !== undefined, `keys create: no key id in\n${createOutput}`);
  check(createOutput.split(key).length === 2, "keys create prints the key more than once");
  log(`keys create: id ${id}`);

  const listOutput = await keys("list");
  check(listOutput.includes("e2e"), `keys list does not show the new key\n${listOutput}`);
  check(!listOutput.includes(key), "keys list prints a whole key");

  const used = await request("GET", "/v1/pets?limit=1", key);
  check(used.status === 200, `the new key: expected 200, got ${used.status}`);
  const usedCreate = await request("POST", "/v1/pets", key, { name: `${name}-b`, categoryId: 1 });
  check(usedCreate.status === 201, `the new key creates: expected 201, got ${usedCreate.status}`);
  log("the new key is accepted");

  await keys("revoke", id);
  const revokedAt = Date.now();
  log(`keys revoke ${id}: polling until it is refused (bound ${REVOCATION_BOUND_MS / 1000} s)`);
  for (;;) {
    const response = await request("GET", "/v1/pets?limit=1", key);
    if (response.status === 401) {
      check(errorCode(response.json) === "unauthorized", "revoked: 401 without code unauthorized");
      check(
        response.headers.get("WWW-Authenticate")?.includes('error="invalid_token"'),
        "revoked: WWW-Authenticate without error=invalid_token",
      );
      break;
    }
    check(response.status === 200, `revoked key: unexpected status ${response.status}`);
    check(
      Date.now() - revokedAt < REVOCATION_BOUND_MS,
      `the revoked key was still accepted after ${REVOCATION_BOUND_MS / 1000} s`,
    );
    await new Promise((r) => setTimeout(r, 1_000));
  }
  log(
    `the revoked key is refused with 401 after ${((Date.now() - revokedAt) / 1000).toFixed(1)} s`,
  );

  const second = await keys("revoke", id).then(
    () => "exit 0",
    (err: Error) => err.message,
  );
  check(second !== "exit 0", "revoking a revoked key succeeded");
  const still = await request("GET", "/v1/pets?limit=1", LOCAL_DEV_KEY);
  check(still.status === 200, `local-dev-key after the revocation: ${still.status}`);

  await restrictedKeys(pet.id);
}

/** `npm run keys -- <args>` against this run's local database; answers standard output. */
function keys(...args: string[]): Promise<string> {
  if (!server) throw new Failure("the server is not running");
  return server.keys(...args);
}

/** The key that `keys create` / `keys rotate` printed alone on its last line, and its id. */
function issued(output: string, what: string): { key: string; id: string } {
  const key = output.trimEnd().split("\n").at(-1)?.trim() ?? "";
  check(/^psk_[A-Za-z0-9_-]{65}$/.test(key), `${what}: last line is not a key:\n${output}`);
  check(output.split(key).length === 2, `${what} prints the key more than once`);
  const id = /(?:Created key|New key) id (\d+)/.exec(output)?.[1];
  check(id !== undefined, `${what}: no key id in\n${output}`);
  return { key, id };
}

interface ListedKeyJson {
  id: number;
  label: string;
  scopes: string[];
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

async function listedKeys(): Promise<ListedKeyJson[]> {
  const output = await keys("list", "--json");
  const parsed = JSON.parse(output.slice(output.indexOf("["))) as ListedKeyJson[];
  check(Array.isArray(parsed), `keys list --json is not an array:\n${output}`);
  return parsed;
}

/**
 * decisions.md "Restricted keys", through the real CLI and the real server: a read-only
 * key reads and gets 403 on a create; a key made with --expires-in 5s works, then is
 * refused from its expiry instant; rotate --grace 0s gives a working key and expires
 * the old one; list --json shows all of it; a wrong flag is one line and exit 2.
 */
async function restrictedKeys(petId: number): Promise<void> {
  const web = issued(
    await keys("create", "--label", "web", "--scope", "pets:read"),
    "keys create --scope pets:read",
  );
  const read = await request("GET", "/v1/pets?limit=1", web.key);
  check(read.status === 200, `read-only key lists: expected 200, got ${read.status}`);
  const fetched = await request("GET", `/v1/pets/${petId}`, web.key);
  check(fetched.status === 200, `read-only key fetches: expected 200, got ${fetched.status}`);
  const denied = await request("POST", "/v1/pets", web.key, { name: "web", categoryId: 1 });
  check(denied.status === 403, `read-only key creates: expected 403, got ${denied.status}`);
  check(errorCode(denied.json) === "insufficient_scope", "403 without code insufficient_scope");
  check(
    denied.headers.get("WWW-Authenticate") ===
      'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"',
    `403: WWW-Authenticate is ${denied.headers.get("WWW-Authenticate")}`,
  );
  log("a pets:read key lists and fetches, and gets 403 insufficient_scope on POST /v1/pets");

  const tempOutput = await keys("create", "--label", "temp", "--expires-in", "5s");
  const early = await request("GET", "/v1/pets?limit=1", issued(tempOutput, "keys create").key);
  const earlyAt = Date.now();
  const temp = issued(tempOutput, "keys create --expires-in 5s");
  const expiresAt = Date.parse(/expires (\S+)\)/.exec(tempOutput)?.[1] ?? "");
  check(Number.isFinite(expiresAt), `keys create --expires-in 5s: no expiry shown\n${tempOutput}`);
  check(
    earlyAt < expiresAt,
    `the 5 s key was first tried ${earlyAt - expiresAt} ms after its expiry`,
  );
  check(early.status === 200, `the 5 s key before its expiry: expected 200, got ${early.status}`);
  log(`the 5 s key works ${((expiresAt - earlyAt) / 1000).toFixed(1)} s before its expiry`);
  // Served from the auth cache from here on: the cache entry ends at the expiry instant.
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
  const late = await request("GET", "/v1/pets?limit=1", temp.key);
  check(late.status === 401, `the 5 s key after its expiry: expected 401, got ${late.status}`);
  check(
    late.headers.get("WWW-Authenticate")?.includes('error="invalid_token"') &&
      /expired/.test(String((late.json as { message?: unknown }).message)),
    "the expired key: 401 without invalid_token or without saying it expired",
  );
  log("a key made with --expires-in 5s works, then is refused (401 invalid_token) from its expiry");

  // Rotation of a key that this isolate has not verified yet: the old key is refused at once.
  const spare = issued(
    await keys("create", "--label", "spare", "--scope", "pets:read"),
    "keys create",
  );
  const rotatedSpare = issued(
    await keys("rotate", spare.id, "--grace", "0s"),
    "keys rotate --grace 0s",
  );
  const spareOld = await request("GET", "/v1/pets?limit=1", spare.key);
  check(spareOld.status === 401, `rotate --grace 0s: the old key got ${spareOld.status}, not 401`);
  const spareNew = await request("GET", "/v1/pets?limit=1", rotatedSpare.key);
  check(spareNew.status === 200, `rotate --grace 0s: the new key got ${spareNew.status}`);

  // Rotation of the web key, in use (cached) here: the new key works at once with the same
  // scopes; the old one is refused within the auth cache's bound (as a revocation is).
  const rotated = issued(await keys("rotate", web.id, "--grace", "0s"), "keys rotate --grace 0s");
  const rotatedAt = Date.now();
  const fresh = await request("GET", "/v1/pets?limit=1", rotated.key);
  check(fresh.status === 200, `the rotated key lists: expected 200, got ${fresh.status}`);
  const freshDenied = await request("POST", "/v1/pets", rotated.key, { name: "x", categoryId: 1 });
  check(
    freshDenied.status === 403,
    `the rotated key keeps pets:read only: got ${freshDenied.status}`,
  );
  for (;;) {
    const response = await request("GET", "/v1/pets?limit=1", web.key);
    if (response.status === 401) break;
    check(response.status === 200, `the rotated-out key: unexpected status ${response.status}`);
    check(
      Date.now() - rotatedAt < REVOCATION_BOUND_MS,
      `the rotated-out key was still accepted after ${REVOCATION_BOUND_MS / 1000} s`,
    );
    await new Promise((r) => setTimeout(r, 1_000));
  }
  log(
    `rotate --grace 0s: the new key works at once; the old one is refused at once where it was not cached, and after ${((Date.now() - rotatedAt) / 1000).toFixed(1)} s where it was`,
  );

  const listed = await listedKeys();
  const byId = (id: string) => listed.find((k) => String(k.id) === id);
  const webRow = byId(web.id);
  const newRow = byId(rotated.id);
  check(
    webRow?.expiresAt !== null &&
      webRow?.scopes.join(" ") === "pets:read" &&
      webRow.lastUsedAt !== null,
    `list --json: the rotated-out key ${JSON.stringify(webRow)}`,
  );
  check(
    newRow?.label === "web" && newRow.scopes.join(" ") === "pets:read" && newRow.expiresAt === null,
    `list --json: the new key ${JSON.stringify(newRow)}`,
  );
  check(byId(temp.id)?.expiresAt !== null, "list --json: the 5 s key has no expiry");
  const table = await keys("list");
  check(/last used/.test(table) && /pets:read/.test(table), `keys list: no table\n${table}`);
  log("keys list --json shows scopes, expiry, last use; keys list prints the table");

  const wrong = await npm(["keys", "--", "create", "--label", "x", "--scope", "pets:admin"]).then(
    () => "exit 0",
    (err: Error) => err.message,
  );
  check(/exited 2\n/.test(wrong), `a wrong --scope: expected exit 2, got ${wrong.slice(0, 200)}`);
  check(/error: --scope must be one of/.test(wrong), `a wrong --scope: no clear line\n${wrong}`);
  check(
    !/\n\s+at .+:\d+:\d+/.test(wrong) && !/ERR_/.test(wrong),
    `a wrong flag printed a stack:\n${wrong}`,
  );
  log("a wrong flag answers one line and the usage, exit 2, no stack trace");
}

await runBounded("e2e", TOTAL_TIMEOUT_MS, main, async () => {
  await server?.stop();
});
