import type { Clock } from "../clock.ts";
import type { PetStore } from "../db/pet-store.ts";
import type { Scope } from "../scopes.ts";
import type { KeptAnswer } from "./conditional-read.ts";

/** Per-request values set by middleware; handlers read them with `c.var`. */
export interface AppVariables {
  requestId: string;
  /** Set by the auth middleware on every authenticated request. */
  apiKeyId: number;
  /** Its account, or its rotation chain for an operator key: shares idempotency keys and budget. */
  apiKeyOwner: string;
  /** The scopes of that key (set with apiKeyId). */
  apiKeyScopes: readonly Scope[];
  /** The operationId of the route, when the request matched one (src/stages.ts). */
  operationId?: string;
  /** The pets this request reads and writes: the store the app factory opened for it. */
  pets: PetStore;
  /** The request body as parsed by `jsonBody`, before validation. */
  jsonBody: unknown;
  clock: Clock;
  /** Starts a conditional read's kept answer lookup; the key check calls it beside its own. */
  lookAhead?: () => void;
  /** What `lookAhead` found, once started; only the conditional read releases it. */
  keptAnswer?: Promise<KeptAnswer | undefined>;
  /** Set by a conditional read's handler: this answer never changes, so it may be kept. */
  immutable?: boolean;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}
