// What a stage of an operation adds to the operation's description: its declaration, an
// export of its own next to the stage's middleware (src/stages.ts lists each operation's
// stages). Only the document builder imports declarations, so none of them is bundled
// into the worker: a declaration is a constant of plain values or a function.
import type * as z from "zod/mini";
import type { ErrorCode } from "../errors.ts";

type Json = Record<string, unknown>;

/** A response header, described once (an OpenAPI header component). */
export interface HeaderSpec {
  name: string;
  /** What it is; each use may add a sentence (`note`). */
  description?: string;
  schema: Json;
}

/** A header that a stage sends on some answers. */
export interface HeaderUse {
  header: HeaderSpec;
  /** On every answer it is declared for; otherwise on some. */
  always?: boolean;
  /** Its value here; the component lists every use's value (`const` or `enum`). */
  value?: string;
  /** A sentence for the component's description; `{operations}` names the operations. */
  note?: string;
}

/** An error a stage can answer with, and the headers that answer carries. */
export interface ErrorUse {
  code: ErrorCode;
  headers?: HeaderUse[];
  /** A fault: any later stage can answer it too. */
  anywhere?: boolean;
}

export interface Declaration {
  /** Header parameters the stage reads (OpenAPI parameter objects). */
  parameters?: Json[];
  /** Request headers the stage reads that are not parameters (Authorization, ...). */
  requestHeaders?: string[];
  /** What a validator checks: the query, the path parameters or the JSON body. */
  validates?: { in: "query" | "path" | "body"; schema: z.ZodMiniType };
  /** How the request body must be sent (the JSON body stage). */
  body?: string;
  errors?: ErrorUse[];
  /** Headers on every answer given by this stage or a later one, errors included. */
  wraps?: HeaderUse[];
  /** Headers on every answer that is not an error (the success, a 304), from here on. */
  answers?: HeaderUse[];
  /** The 304 this stage answers: what it means and the headers it keeps. */
  notModified?: { description: string; headers: HeaderUse[] };
  /** Fields of the operation object (`security`, `deprecated`). */
  operation?: Json;
  /** Security schemes the stage enforces (OpenAPI components). */
  securitySchemes?: Record<string, Json>;
}
