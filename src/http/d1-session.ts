// D1 Sessions API: reads may be served by a nearby replica, and the bookmark a
// client sends back guarantees it sees at least what it saw (or wrote) before.
// The app factory says which store to open (src/app.ts); these stages only check the
// bookmark a client sends and return the store's.
import { createMiddleware } from "hono/factory";
import type { OpenPetStore } from "../db/pet-store.ts";
import { ApiError, DATABASE_UNAVAILABLE } from "../errors.ts";
import type { Declaration } from "./stage.ts";
import type { AppEnv } from "./types.ts";

const BOOKMARK_HEADER = "x-d1-bookmark";
/** What a D1 bookmark looks like; the document publishes it as the header's pattern. */
const BOOKMARK = /^[A-Za-z0-9-]{1,256}$/;

/** A read takes the client's bookmark: a malformed one is 400, with the read's other input. */
export const bookmark = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header(BOOKMARK_HEADER);
  if (header !== undefined && !BOOKMARK.test(header)) {
    throw new ApiError(
      "invalid_parameter",
      `Header "${BOOKMARK_HEADER}" is not a D1 bookmark: send back the value of an earlier answer's "${BOOKMARK_HEADER}" header, or none.`,
      { details: [{ field: BOOKMARK_HEADER, message: "is not a D1 bookmark" }] },
    );
  }
  await next();
});

export const bookmarkDeclares = (): Declaration => ({
  parameters: [
    {
      name: BOOKMARK_HEADER,
      in: "header",
      required: false,
      description:
        "A bookmark from an earlier response: the read sees data at least that fresh. Malformed: 400 `invalid_parameter`. Only reads take it; other operations ignore it.",
      schema: { type: "string", pattern: BOOKMARK.source },
    },
  ],
  errors: [{ code: "invalid_parameter" }],
});

/**
 * The operation's session, as the operation table declares it: a read starts anywhere,
 * or no older than the bookmark the client sent (checked by `bookmark`); a write starts
 * on the primary, and ignores any bookmark (it is not a parameter of writes).
 */
export function d1Session(kind: "read" | "write", openPetStore: OpenPetStore) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const after = kind === "read" ? c.req.header(BOOKMARK_HEADER) : undefined;
    const pets = openPetStore(c.env, { kind, after });
    c.set("pets", pets);
    await next();
    const sent = pets.bookmark();
    if (sent) c.res.headers.set(BOOKMARK_HEADER, sent);
  });
}

/** What a session adds: the bookmark of every answer, and 503 when D1 is unavailable. */
export const d1SessionDeclares = (): Declaration => ({
  answers: [
    {
      header: {
        name: BOOKMARK_HEADER,
        description:
          "D1 Sessions bookmark of the data this response reflects. Send it back as `x-d1-bookmark` to read your own writes from any location. An answer served from the edge cache ran no query: it carries the bookmark the request sent, or none.",
        schema: { type: "string" },
      },
    },
  ],
  errors: [DATABASE_UNAVAILABLE],
});
