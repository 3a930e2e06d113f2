import type { Clock } from "../../src/clock.ts";
import type { Logger } from "../../src/log.ts";
import type { Account } from "./db/accounts.ts";
import type { RelyingParty } from "./webauthn.ts";

/** Per-request values the platform's middleware sets; handlers read them with `c.var`. */
export interface PlatformVariables {
  requestId: string;
  clock: Clock;
  log: Logger;
  rp: RelyingParty;
  /** The signed-in account (set by `requireSession`, or by `optionalSession` when there is one). */
  account: Account | undefined;
  /** The SHA-256 of the session token the browser sent, when its session is valid. */
  sessionHash: string;
  /** The request's JSON body, parsed by `stateChange`. */
  jsonBody: unknown;
}

export interface PlatformAppEnv {
  Bindings: Env;
  Variables: PlatformVariables;
}
