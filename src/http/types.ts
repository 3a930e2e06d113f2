import type { Clock } from "../clock.ts";
import type { PetStore } from "../db/pet-store.ts";
import type { Scope } from "../scopes.ts";
import type { KeptAnswer } from "./conditional-read.ts";

/** Per-request values set by middleware; handlers read them with `c.var`. */
export interface AppVariables {
  requestId: string;
  /** Set by the auth middleware on every authenticated request. */
  apiKeyId: number;
  /** The scopes of that key (set with apiKeyId). */
  apiKeyScopes: readonly Scope[];
  /** The pets this request reads and writes: the store the app factory opened for it. */
  pets: PetStore;
  /** The request body as parsed by `jsonBody`, before validation. */
  jsonBody: unknown;
  clock: Clock;
  /**
   * Set by a conditional read's first stage (src/http/conditional-read.ts): starts the
   * kept answer's lookup. The key check calls it when it must look the key up, so both
   * lookups run side by side.
   */
  lookAhead?: () => void;
  /** What `lookAhead` found, once started; only the conditional read stage uses it. */
  keptAnswer?: Promise<KeptAnswer | undefined>;
  /**
   * Set by a conditional read's handler: this answer never changes once it exists (a
   * pet; a page that has a next page), so the edge cache may keep it.
   */
  immutable?: boolean;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}
