// What a person types after `npm run smoke --`, parsed without Node APIs so the tests
// run this very parser in workerd (test/smoke.test.ts). Wrong input becomes one
// UsageError line; scripts/smoke.ts prints it with the usage and exits 2.
// The API key never comes from a flag: only from the environment variable
// SMOKE_API_KEY, so it stays out of shell history, process lists and CI logs.
import type { SmokeOptions } from "./smoke-checks.ts";

export const API_KEY_VARIABLE = "SMOKE_API_KEY";

export const USAGE = `usage: SMOKE_API_KEY=<key> npm run smoke -- --base <url> [--write] [--timeout <seconds>]
         [--pin <worker>=<version-id>] [--cors-origin <origin>]

  --base         the deployment's origin, e.g. https://api.petstore.example.com (a trailing /v1
                 is accepted); plain http only for 127.0.0.1, [::1] or localhost
  --write        also create a pet with an Idempotency-Key and replay it (staging; the key
                 needs pets:write). Without it every request is a read.
  --timeout      seconds to wait for each answer (default 10)
  --pin          send every request to that version of the worker (Cloudflare-Workers-
                 Version-Overrides), e.g. petstore-api-production=<version id from versions upload>
  --cors-origin  the Origin of the CORS preflight (default https://example.com)

  SMOKE_API_KEY  the API key (pets:read; pets:write too for --write). Never printed.
  Exit code: 0 every check passed, 1 a check failed, 2 wrong usage.`;

export class UsageError extends Error {}

const VALUE_FLAGS = new Set(["base", "timeout", "pin", "cors-origin"]);
const BOOLEAN_FLAGS = new Set(["write", "help"]);

const show = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

const LOOPBACK = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/;

/** The origin of `--base`; refuses what would send the key somewhere unexpected. */
export function parseBase(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(
      `--base ${show(text)} is not a URL (e.g. https://api.petstore.example.com)`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UsageError(`--base must be an http(s) URL, not ${show(url.protocol)}`);
  }
  if (url.protocol === "http:" && !LOOPBACK.test(url.hostname)) {
    throw new UsageError(
      "--base: plain http only for 127.0.0.1, [::1] or localhost (the key would cross the network unencrypted)",
    );
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new UsageError("--base must not carry credentials, a query or a fragment");
  }
  if (!["/", "/v1", "/v1/"].includes(url.pathname)) {
    throw new UsageError(
      `--base is the deployment's origin, without the path ${show(url.pathname)}`,
    );
  }
  return url.origin;
}

/** Cloudflare-Workers-Version-Overrides: a Dictionary of worker name → version id string. */
function parsePin(text: string): { worker: string; version: string } {
  const match =
    /^([a-z][a-z0-9_-]{0,62})=([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(
      text,
    );
  if (!match) {
    throw new UsageError(
      `--pin ${show(text)}: expected <worker name>=<version id>, e.g. petstore-api-production=0f6bfa3e-...`,
    );
  }
  return { worker: match[1] as string, version: match[2] as string };
}

function parseOrigin(text: string): string {
  try {
    const url = new URL(text);
    if ((url.protocol === "https:" || url.protocol === "http:") && url.origin === text) return text;
  } catch {
    // below
  }
  throw new UsageError(`--cors-origin ${show(text)} is not an origin such as https://example.com`);
}

export function parseSmokeArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): SmokeOptions | "help" {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (!word.startsWith("--")) throw new UsageError(`unexpected argument ${show(word)}`);
    const eq = word.indexOf("=");
    const name = word.slice(2, eq === -1 ? undefined : eq);
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      values.set(name, "");
      continue;
    }
    if (!VALUE_FLAGS.has(name)) {
      throw new UsageError(
        name === "key" || name === "api-key"
          ? `--${name}: the key comes only from the environment variable ${API_KEY_VARIABLE}`
          : `unknown flag ${show(word)}`,
      );
    }
    if (values.has(name)) throw new UsageError(`--${name} given twice`);
    const value = eq === -1 ? argv[++i] : word.slice(eq + 1);
    if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) {
      throw new UsageError(`--${name} needs a value`);
    }
    values.set(name, value);
  }
  if (values.has("help")) return "help";

  const base = values.get("base");
  if (base === undefined) throw new UsageError("--base is required");
  let timeoutMs = 10_000;
  const timeout = values.get("timeout");
  if (timeout !== undefined) {
    if (!/^[1-9][0-9]{0,2}$/.test(timeout) || Number(timeout) > 120) {
      throw new UsageError(`--timeout ${show(timeout)}: whole seconds from 1 to 120`);
    }
    timeoutMs = Number(timeout) * 1000;
  }
  const pin = values.get("pin");
  const apiKey = env[API_KEY_VARIABLE] ?? "";
  if (apiKey === "") {
    throw new UsageError(`the environment variable ${API_KEY_VARIABLE} (the API key) is not set`);
  }
  // A header value: printable ASCII without spaces. Say so without echoing the key.
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new UsageError(`${API_KEY_VARIABLE} holds spaces or characters a key never has`);
  }
  return {
    base: parseBase(base),
    apiKey,
    write: values.has("write"),
    timeoutMs,
    pin: pin === undefined ? undefined : parsePin(pin),
    corsOrigin: parseOrigin(values.get("cors-origin") ?? "https://example.com"),
  };
}
