// The Hono env of the API: its bindings and what its middleware sets on each request.
import type { Clock } from "../clock.ts";
import type { PetStore } from "../db/pet-store.ts";
import type { Scope } from "../scopes.ts";

/** Per-request values set by middleware; handlers read them with `c.get` (`c.var` copies them all at each read). */
interface AppVariables {
  requestId: string;
  /** The operation responding (its operationId), set by its first middleware. */
  operationId?: string;
  /** Set by the auth middleware on every authenticated request. */
  apiKeyId: number;
  /** Its account, or its rotation chain for an operator key: shares idempotency keys and budget. */
  apiKeyOwner: string;
  /** The scopes of that key (set with apiKeyId). */
  apiKeyScopes: readonly Scope[];
  /** The pets this request reads and writes: the store the app factory opened for it. */
  pets: PetStore;
  /** The entity tags of If-Match (none: absent or `*`), for an operation that takes it. */
  ifMatch: string[] | undefined;
  /** The request body as parsed by `jsonBody`, before validation. */
  jsonBody: unknown;
  clock: Clock;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}
