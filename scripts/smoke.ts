// SMOKE_API_KEY=<key> npm run smoke -- --base <url> [...]: vitest runs test/live/smoke.test.ts
// against a deployment as a client would. The key comes from SMOKE_API_KEY only (out of shell
// history, process lists and CI logs) and is never printed.
import { parseArgs } from "node:util";
import { startVitest } from "vitest/node";

export const USAGE = `usage: SMOKE_API_KEY=<key> npm run smoke -- --base <url> [--platform <url>] [--write]
         [--timeout <seconds>] [--pin <worker>=<version-id>] [--cors-origin <origin>]

  --base         the deployment's origin, e.g. https://api.petstore.example.com (a trailing /v1
                 is accepted); plain http only for 127.0.0.1, [::1] or localhost
  --platform     also check the developer platform at this origin, e.g.
                 https://developers.petstore.example.com: its page, its policy, its Errors,
                 and that the API's reference page leads there. The key is never sent to it.
  --write        also create a pet with an Idempotency-Key, replay it, change it with If-Match
                 and remove it: nothing is left behind (staging; the key needs pets:write).
                 Without it every request is a read.
  --timeout      seconds to wait for each response (default 10)
  --pin          send every request to that version of the worker (Cloudflare-Workers-
                 Version-Overrides), e.g. petstore-api-production=<version id from versions upload>
  --cors-origin  the Origin of the CORS preflight (default https://example.com)

  SMOKE_API_KEY  the API key (pets:read; pets:write too for --write). Never printed.
  Exit code: 0 every check passed, 1 a check failed, 2 wrong usage.`;

export interface SmokeOptions {
  /** The deployment's origin: every request goes there and nowhere else... */
  base: string;
  /** ...but those to the developer platform, when it is checked too (never with the key). */
  platform: string | undefined;
  write: boolean;
  timeoutMs: number;
  /** The Cloudflare-Workers-Version-Overrides header value, when pinned. */
  pin: string | undefined;
  corsOrigin: string;
}

declare module "vitest" {
  interface ProvidedContext {
    smoke: SmokeOptions;
  }
}

export class UsageError extends Error {}

const LOOPBACK = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/;
const VERSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Throws `message` as the one line of a UsageError when `wrong` holds. */
function refuse(wrong: unknown, message: string): void {
  if (wrong) throw new UsageError(message);
}

/**
 * The origin `--<flag>` names (`paths`: the paths it may carry); refuses what would send
 * a request somewhere unexpected.
 */
function origin(flag: string, text: string, paths: string[]): string {
  const url = URL.parse(text);
  if (!url) throw new UsageError(`--${flag} ${text} is not a URL (e.g. https://api.example.com)`);
  refuse(!/^https?:$/.test(url.protocol), `--${flag} must be an http(s) URL, not ${url.protocol}`);
  refuse(
    url.protocol === "http:" && !LOOPBACK.test(url.hostname),
    `--${flag}: plain http only for 127.0.0.1, [::1] or localhost (requests would cross the network unencrypted)`,
  );
  refuse(
    url.username || url.password || url.search || url.hash,
    `--${flag} must not carry credentials, a query or a fragment`,
  );
  refuse(
    !paths.includes(url.pathname),
    `--${flag} is the deployment's origin, without the path ${url.pathname}`,
  );
  return url.origin;
}

const [text, flag] = [{ type: "string" }, { type: "boolean" }] as const;
const OPTIONS = { base: text, platform: text, write: flag, timeout: text, pin: text, help: flag };
const ALL_OPTIONS = { ...OPTIONS, "cors-origin": text, key: text };

/** The options of `npm run smoke -- <argv>`; a UsageError (one line) for wrong input. */
export function smokeOptions(
  argv: string[],
  env: Record<string, string | undefined>,
): SmokeOptions | "help" {
  let values: ReturnType<typeof parseArgs<{ options: typeof ALL_OPTIONS }>>["values"];
  try {
    values = parseArgs({ args: argv, strict: true, options: ALL_OPTIONS }).values;
  } catch (err) {
    throw new UsageError((err as Error).message.split("\n")[0]);
  }
  if (values.help) return "help";
  refuse(values.key, "--key: the key comes only from the environment variable SMOKE_API_KEY");
  if (values.base === undefined) throw new UsageError("--base is required");
  const seconds = Number(values.timeout ?? 10);
  refuse(
    !Number.isInteger(seconds) || seconds < 1 || seconds > 120,
    `--timeout ${values.timeout}: whole seconds from 1 to 120`,
  );
  const [worker = "", version = ""] = values.pin?.split("=") ?? [];
  refuse(
    values.pin !== undefined &&
      !(/^[a-z][a-z0-9_-]{0,62}$/.test(worker) && VERSION_ID.test(version)),
    `--pin ${values.pin}: expected <worker name>=<version id>`,
  );
  const corsOrigin = values["cors-origin"] ?? "https://example.com";
  refuse(
    URL.parse(corsOrigin)?.origin !== corsOrigin,
    `--cors-origin ${corsOrigin} is not an origin such as https://example.com`,
  );
  const apiKey = env.SMOKE_API_KEY ?? "";
  refuse(apiKey === "", "the environment variable SMOKE_API_KEY (the API key) is not set");
  // A header value: printable ASCII without spaces. Said without echoing the key.
  refuse(
    !/^[\x21-\x7e]+$/.test(apiKey),
    "SMOKE_API_KEY holds spaces or characters a key never has",
  );
  const base = origin("base", values.base, ["/", "/v1", "/v1/"]);
  const platform =
    values.platform === undefined ? undefined : origin("platform", values.platform, ["/"]);
  refuse(platform === base, "--platform is the developer platform's origin, not the API's");
  return {
    base,
    platform,
    write: values.write ?? false,
    timeoutMs: seconds * 1000,
    pin: values.pin === undefined ? undefined : `${worker}="${version}"`,
    corsOrigin,
  };
}

if (import.meta.main) {
  let options: SmokeOptions | "help";
  try {
    options = smokeOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options === "help") {
    console.log(USAGE);
  } else {
    await startVitest("test", [], {
      config: "vitest.live.config.ts",
      project: ["smoke"],
      run: true,
      provide: { smoke: options },
    });
  }
}
