// What each tool and argument says to an agent: what it does and when to use it, in its terms,
// where the API's descriptions speak HTTP (headers, status codes, how a number is written in a
// URL). Build time only: tools.ts writes them into tools.json (docs/agents.md, "Tools").
import { NAME_MAX_CODE_POINTS, PAGE_SIZE } from "../../src/config.ts";

/** What the words may depend on, known when tools.json is written. */
export interface Facts {
  /** The OpenAPI document's size as getOpenApiDocument returns it, in bytes. */
  documentBytes: number;
}

export interface ToolWords {
  /** A short name for people (the tool's `title`). */
  title: string;
  /** What it does and when to use it. */
  description: string | ((facts: Facts) => string);
  /** Its arguments' words, where the shared ones below do not fit. */
  arguments?: Record<string, string>;
  /** A deprecated tool: the tool that does the same job, or, honestly, that none does. */
  replacement?: string;
}

/** The server's instructions (`initialize`): how the tools fit together. */
export const INSTRUCTIONS =
  "The Pet Store's animals. Browse them with listPets (follow nextCursor for more), add them with createPet (a new idempotencyKey per animal, the same one when you retry), change or remove them with updatePet and deletePet (pass the etag you last saw to act only if nobody changed the animal since). You see only the tools your key allows. A failed call's result is an Error {code, message, status} that says what to fix.";

const STATUS_MEANINGS = "available (for sale), pending (a sale in progress) or sold";

/** Arguments that mean the same in every tool that takes them. */
export const ARGUMENT_WORDS: Record<string, string> = {
  petId: "The animal's `id`.",
  name: `The animal's name: 1 to ${NAME_MAX_CODE_POINTS} characters of ordinary text (letters, digits, punctuation, symbols, spaces; not only spaces, no control characters), kept exactly as given.`,
  categoryId:
    "The number of the animal's category, 1 or more (e.g. 12). The store keeps no list of categories: use the number you were given.",
  idempotencyKey:
    "Makes retrying safe: a new value (1 to 255 printable characters, e.g. a UUID) for each animal you mean to add, and the same value when you retry that call. Within 24 hours the same value with the same arguments returns the first result instead of adding again; with other arguments the call fails with idempotency_key_reused.",
  etag: "The animal's `etag` from your last createPet, getPet or updatePet: the call then acts only if nobody changed the animal since (else it fails with precondition_failed: look the animal up again and decide). Leave it out to act on the animal as it is now.",
};

export const TOOL_WORDS: Record<string, ToolWords> = {
  listPets: {
    title: "List animals",
    description: `Lists the store's animals, oldest first, a page at a time (${PAGE_SIZE.default} unless you set \`limit\`), optionally only those with one \`status\`. Use it to browse the store or to find animals by status. When the result has \`nextCursor\`, more follow: call again with the same \`status\` and \`cursor\` set to it, until it has none. It cannot look an animal up by id.`,
    arguments: {
      limit: `How many animals to return at most, ${PAGE_SIZE.min} to ${PAGE_SIZE.max} (${PAGE_SIZE.default} if you leave it out).`,
      status: `Only animals with this status: ${STATUS_MEANINGS}. Leave it out for every animal.`,
      cursor:
        "The `nextCursor` of the previous page, to get the next one; leave it out for the first page. Keep the `status` of that page.",
    },
  },
  createPet: {
    title: "Add an animal",
    description:
      "Adds an animal to the store and returns it with its new `id` and its `etag`. Call it once per animal: give each animal you mean to add a new `idempotencyKey`, and send the same one again if you retry after an error or a timeout, so that the retry returns the animal already added instead of adding a second one.",
    arguments: {
      status: `The animal's status: ${STATUS_MEANINGS}; available if you leave it out.`,
    },
  },
  getPet: {
    title: "Look up an animal by id (deprecated)",
    description:
      "Returns one animal by its `id`, with its `etag`. Use it when you know an animal's id and need its current name, category or status, for instance before changing it.",
    replacement:
      "No other tool looks an animal up by id (listPets only browses): use this one until then.",
  },
  updatePet: {
    title: "Change an animal",
    description:
      "Changes an animal's name, category or status; what you leave out stays as it is. Returns the animal as changed, with its new `etag`. A status moves from available to pending or sold, and from pending back to available or on to sold; sold is final (the call fails with invalid_transition). Pass the `etag` you last got for the animal to change it only if nobody changed it since.",
    arguments: {
      status: `The new status: ${STATUS_MEANINGS} (which moves are allowed: see the tool).`,
    },
  },
  deletePet: {
    title: "Remove an animal",
    description:
      "Removes an animal from the store for good; its id is never given to another animal. If a retry fails with not_found, the animal is already gone. Pass the `etag` you last got for the animal to remove it only if nobody changed it since.",
  },
  getOpenApiDocument: {
    title: "The API's OpenAPI document",
    description: ({ documentBytes }) =>
      `Returns the full OpenAPI 3.1 description of the Pet Store HTTP API: about ${Math.round(documentBytes / 1000)} KB of JSON, roughly ${Math.round(documentBytes / 4000)},000 tokens. You do not need it to use these tools, whose own schemas say what they take and return: call it only to write code against the HTTP API itself, or to learn a detail no tool shows.`,
  },
};
