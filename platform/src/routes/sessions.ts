// The account's sessions: sign-out (this session, or all of the account's), the list of
// signed-in browsers, and ending one by its public id.
import { Hono } from "hono";
import { endAccountSessions, endSessionById, listSessions } from "../db/sessions.ts";
import { PlatformError } from "../errors.ts";
import { bodyOf, stateChange } from "../request.ts";
import { sessionJson } from "../responses.ts";
import { EmptyBody } from "../schemas.ts";
import { clearSessionCookie, signedIn, signOut } from "../session.ts";
import { nowOf } from "../time.ts";
import type { PlatformAppEnv } from "../types.ts";

/** Under /api (routes/index.ts): every change passes `stateChange` (request.ts) first. */
export const sessionRoutes = new Hono<PlatformAppEnv>();

sessionRoutes.post("/sign-out", stateChange, async (c) => {
  bodyOf(c, EmptyBody);
  await signOut(c);
  return c.body(null, 204);
});

sessionRoutes.post("/sign-out-everywhere", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  await endAccountSessions(c.env.DB, account.id);
  clearSessionCookie(c);
  return c.body(null, 204);
});

sessionRoutes.get("/sessions", async (c) => {
  const account = signedIn(c);
  const sessions = await listSessions(c.env.DB, account.id, nowOf(c));
  return c.json(sessions.map((s) => sessionJson(s, c.var.session?.id)));
});

sessionRoutes.post("/sessions/:id/end", stateChange, async (c) => {
  const account = signedIn(c);
  bodyOf(c, EmptyBody);
  const id = c.req.param("id");
  if (!(await endSessionById(c.env.DB, account.id, id))) {
    throw new PlatformError("not_found", "No such session.");
  }
  if (id === c.var.session?.id) clearSessionCookie(c);
  return c.body(null, 204);
});
