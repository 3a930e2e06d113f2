// D1 Sessions API: reads may be served by a nearby replica, and the bookmark a
// client sends back guarantees it sees at least what it saw (or wrote) before.
// The request's pet store is made here: the one place that knows pets live in one D1.
import { createMiddleware } from "hono/factory";
import { d1PetStore } from "../db/pet-store.ts";
import { ApiError, DatabaseUnavailableError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

export const BOOKMARK_HEADER = "x-d1-bookmark";
const BOOKMARK = /^[A-Za-z0-9-]{1,256}$/;

/**
 * The operation's session, as the operation table declares it: a read starts anywhere,
 * or no older than the client's bookmark; a write starts on the primary.
 */
export function d1Session(kind: "read" | "write") {
  return createMiddleware<AppEnv>(async (c, next) => {
    const sent = c.req.header(BOOKMARK_HEADER);
    if (sent !== undefined && !BOOKMARK.test(sent)) {
      throw new ApiError("invalid_parameter", `Header "${BOOKMARK_HEADER}" is not a D1 bookmark.`);
    }
    let session: D1DatabaseSession;
    try {
      session = c.env.DB.withSession(
        kind === "read" ? (sent ?? "first-unconstrained") : "first-primary",
      );
    } catch (err) {
      throw new DatabaseUnavailableError(err);
    }
    const pets = d1PetStore(session);
    c.set("pets", pets);
    await next();
    const bookmark = pets.bookmark();
    if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
  });
}
