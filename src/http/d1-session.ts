// D1 Sessions API: reads may be served by a nearby replica, and the bookmark a
// client sends back guarantees it sees at least what it saw (or wrote) before.
// The app factory says which store to open (src/app.ts); this middleware only reads the
// bookmark a client sends and returns the store's.
import { createMiddleware } from "hono/factory";
import type { OpenPetStore } from "../db/pet-store.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./types.ts";

export const BOOKMARK_HEADER = "x-d1-bookmark";
/** What a D1 bookmark looks like; the document publishes it as the header's pattern. */
export const BOOKMARK = /^[A-Za-z0-9-]{1,256}$/;

/** The bookmark a read was sent, or undefined; a malformed one is 400. */
function sentBookmark(header: string | undefined): string | undefined {
  if (header !== undefined && !BOOKMARK.test(header)) {
    throw new ApiError(
      "invalid_parameter",
      `Header "${BOOKMARK_HEADER}" is not a D1 bookmark: send back the value of an earlier answer's "${BOOKMARK_HEADER}" header, or none.`,
      { details: [{ field: BOOKMARK_HEADER, message: "is not a D1 bookmark" }] },
    );
  }
  return header;
}

/**
 * The operation's session, as the operation table declares it: a read starts anywhere,
 * or no older than the bookmark the client sends; a write starts on the primary, and
 * ignores any bookmark (it is not a parameter of writes).
 */
export function d1Session(kind: "read" | "write", open: OpenPetStore) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const after = kind === "read" ? sentBookmark(c.req.header(BOOKMARK_HEADER)) : undefined;
    const pets = open(c.env, { kind, after });
    c.set("pets", pets);
    await next();
    const bookmark = pets.bookmark();
    if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
  });
}
