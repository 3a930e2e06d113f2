// Recovery codes (docs/platform.md, "Recovery"): new ones replace the old, shown in this
// response only.
import { Hono } from "hono";
import { replaceRecoveryCodes } from "../db/recovery-codes.ts";
import { newRecoveryCodes, recoveryCodeHash } from "../recovery.ts";
import { bodyOf, stateChange } from "../request.ts";
import { EmptyBody } from "../schemas.ts";
import { signedIn } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
export const recoveryCodeRoutes = new Hono<PlatformAppEnv>();

recoveryCodeRoutes.post("/recovery-codes", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(
    c.env.DB,
    account.id,
    await Promise.all(codes.map(recoveryCodeHash)),
    nowOf(c),
  );
  return c.json({ codes }, 201);
});
