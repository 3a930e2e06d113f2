// What the verifier (src/auth/verifier.ts) does for a key isolate memory knows: nothing but
// response. `lookingUp`, which starts work meant to run beside a lookup, is called only when
// memory does not know the key and its format allows a lookup.
import { expect, it, vi } from "vitest";
import { createApiKeyVerifier } from "../src/auth/verifier.ts";
import { createKey, unknownKey, verifyContext } from "./helpers.ts";
import { NO_EDGE_CACHE } from "./support/instrumented-app.ts";

it("lookingUp is called once per key this isolate's memory does not know, never for a refused format", async () => {
  const verifier = createApiKeyVerifier(Date.now, { cache: () => NO_EDGE_CACHE });
  const { key, id } = await createKey("verifier-memory");
  const unknown = await unknownKey();
  const lookingUp = vi.fn();
  const verify = (token: string) => verifier.verify(token, { ...verifyContext(), lookingUp });
  for (let i = 0; i < 3; i++) {
    expect(await verify(key)).toMatchObject({ ok: true, key: { id } });
    expect(await verify(unknown)).toEqual({ ok: false, reason: "unknown" });
    expect(await verify("not-a-key")).toEqual({ ok: false, reason: "unknown" });
  }
  expect(lookingUp).toHaveBeenCalledTimes(2);
});
