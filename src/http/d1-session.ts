// D1 Sessions API: reads may be served by a nearby replica, and the bookmark a
// client sends back guarantees it sees at least what it saw (or wrote) before.
// The app factory says which store to open (src/app.ts); this middleware only reads the
// bookmark a client sends and returns the store's.
import { createMiddleware } from "hono/factory";
import type { OpenPetStore } from "../db/pet-store.ts";
import { ApiError, DATABASE_UNAVAILABLE } from "../errors.ts";
import type { Declaration, HeaderSpec, Stage } from "./stage.ts";
import type { AppEnv } from "./types.ts";

const BOOKMARK_HEADER = "x-d1-bookmark";
/** What a D1 bookmark looks like; the document publishes it as the header's pattern. */
const BOOKMARK = /^[A-Za-z0-9-]{1,256}$/;

const RESPONSE_BOOKMARK: HeaderSpec = {
  name: BOOKMARK_HEADER,
  description:
    "D1 Sessions bookmark of the data this response reflects. Send it back as `x-d1-bookmark` to read your own writes from any location. An answer served from the edge cache ran no query: it carries the bookmark the request sent, or none.",
  schema: { type: "string" },
};

/** What a session adds: the bookmark of every answer, and 503 when D1 is unavailable. */
const SESSION: Declaration = {
  answers: [{ header: RESPONSE_BOOKMARK }],
  errors: [DATABASE_UNAVAILABLE],
};

/** A read also takes the client's bookmark (a malformed one is 400). */
const READ_SESSION: Declaration = {
  ...SESSION,
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
  errors: [{ code: "invalid_parameter" }, DATABASE_UNAVAILABLE],
};

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
export function d1Session(kind: "read" | "write"): Stage<{ openPetStore: OpenPetStore }> {
  return {
    declares: kind === "read" ? READ_SESSION : SESSION,
    middleware: ({ openPetStore }) =>
      createMiddleware<AppEnv>(async (c, next) => {
        const after = kind === "read" ? sentBookmark(c.req.header(BOOKMARK_HEADER)) : undefined;
        const pets = openPetStore(c.env, { kind, after });
        c.set("pets", pets);
        await next();
        const bookmark = pets.bookmark();
        if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
      }),
  };
}
