// D1 Sessions API: reads may be served by a nearby replica, and the bookmark a client sends
// back guarantees it sees at least what it saw (or wrote) before.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { OpenPetStore } from "../db/pet-store.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

export const BOOKMARK_HEADER = "x-d1-bookmark";
/** What a D1 bookmark looks like; the document publishes it as the header's pattern. */
export const BOOKMARK = /^[A-Za-z0-9-]{1,256}$/;

/** The bookmark a read was sent, or none; a malformed one is 400. */
export function bookmarkOf(c: Context<AppEnv>): string | undefined {
  const sent = c.req.header(BOOKMARK_HEADER);
  if (sent !== undefined && !BOOKMARK.test(sent)) {
    throw new ApiError(
      "invalid_parameter",
      `Header "${BOOKMARK_HEADER}" is not a D1 bookmark: send back the value of an earlier response's "${BOOKMARK_HEADER}" header, or none.`,
      { details: [{ field: BOOKMARK_HEADER, message: "is not a D1 bookmark" }] },
    );
  }
  return sent;
}

/**
 * The operation's session: a read starts anywhere, or no older than the bookmark the client
 * sent (a malformed one is 400); a write starts on the primary and ignores any bookmark.
 * Every response carries the session's bookmark (a cached one, the bookmark of its data).
 */
export function d1Session(kind: "read" | "write", openPetStore: OpenPetStore) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const after = kind === "read" ? bookmarkOf(c) : undefined;
    const pets = openPetStore(c.env, { kind, after });
    c.set("pets", pets);
    await next();
    const sent = pets.bookmark();
    if (sent && !c.res.headers.has(BOOKMARK_HEADER)) c.res.headers.set(BOOKMARK_HEADER, sent);
  });
}
