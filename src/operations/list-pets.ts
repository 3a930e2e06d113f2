// GET /v1/pets: a keyset page of animals, the next page in `Link`.
import { originOf } from "../http/request-context.ts";
import { cursorSecret, decodeCursor, encodeCursor } from "../pets/cursor.ts";
import { ListPetsQuerySchema, PetsSchema } from "../pets/schemas.ts";
import { defineOperation } from "./operation.ts";

export const listPets = defineOperation(
  {
    operationId: "listPets",
    tag: "animals",
    method: "get",
    path: "/pets",
    scope: "pets:read",
    summary: "List animals",
    description:
      'Returns animals in ascending id (creation) order as a bare array. Pages use keyset pagination: when more animals follow, the `Link` header carries `rel="next"` with an opaque `cursor`; the last page has none.',
    query: ListPetsQuerySchema,
    pets: "read",
    // A last page changes with every create: it is never cached.
    conditional: { cacheable: (selected) => selected.headers?.Link !== undefined },
    success: {
      status: 200,
      schema: PetsSchema,
      description: "A page of animals.",
      headers: {
        Link: {
          description:
            'RFC 8288: `<URL>; rel="next"` when more animals follow (absent on the last page).',
          schema: { type: "string", maxLength: 1024, pattern: "^<" },
        },
      },
    },
    errors: ["invalid_cursor"],
    mcp: { tool: true },
  },
  async (c) => {
    const query = c.req.valid("query");
    const { limit } = query;
    const secret = cursorSecret(c.env);
    const afterId =
      query.cursor === undefined ? 0 : await decodeCursor(query.cursor, query.status, secret);
    const page = await c.get("pets").list({ afterId, limit, status: query.status });
    const last = page.pets.at(-1);
    if (!(page.hasMore && last)) return { json: page.pets };
    // From the validated query alone (limit, status, cursor, in that order): every spelling
    // of one request gets the same response, and one edge-cache entry. No value needs
    // escaping: digits, a status word, a base64url cursor.
    const status = query.status ? `&status=${query.status}` : "";
    const cursor = await encodeCursor(last.id, query.status, secret);
    const next = `${originOf(c.req.url)}/v1/pets?limit=${limit}${status}&cursor=${cursor}`;
    return { json: page.pets, headers: { Link: `<${next}>; rel="next"` } };
  },
);
