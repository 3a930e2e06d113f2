// What the platform's middleware sets on each request, and its Hono env.
import type { Clock } from "../../src/clock.ts";
import type { Logger } from "../../src/log.ts";
import type { Account } from "./db/accounts.ts";
import type { SessionRecord } from "./db/sessions.ts";
import type { RelyingParty } from "./webauthn.ts";

/** Per-request values the platform's middleware sets; handlers read them with `c.var`. */
interface PlatformVariables {
  requestId: string;
  clock: Clock;
  log: Logger;
  rp: RelyingParty;
  /** How the OAuth server fetches client metadata documents (the app's `oauth.fetch`). */
  clientFetch: typeof fetch;
  /** The signed-in account, set by `loadSession` (undefined: none); `signedIn` requires one. */
  account: Account | undefined;
  /** The session the browser presented, when it is valid. */
  session: SessionRecord | undefined;
  /** The request's JSON body, parsed by `stateChange`. */
  jsonBody: unknown;
}

/** The platform's Hono env: its bindings (platform/wrangler.toml) and what its middleware sets. */
export interface PlatformAppEnv {
  Bindings: Env;
  Variables: PlatformVariables;
}
