// Who an OAuth client is (docs/platform.md, "Connecting agents"): a Client ID Metadata
// Document (the IETF draft) fetched from its https client_id, or a registered client (RFC 7591);
// and which redirect URIs each may use: exactly its own, loopback ports per RFC 8252 7.3.
import * as z from "zod/mini";
import { base64url } from "../../../src/encoding.ts";
import { readBodyCapped } from "../../../src/http/json-body.ts";
import { PetNameSchema } from "../../../src/pets/schemas.ts";

/** A metadata document is at most this large, and fetched within this time. */
const CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024;
const CLIENT_DOCUMENT_TIMEOUT_MS = 5_000;
/** Redirect URIs a client may name, and the length of each. */
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2_000;

/** A client as the consent page shows it and the authorization request checks it. */
export interface Client {
  /** Its client_id: the https URL of its metadata document, or `mcpc_...` when registered. */
  id: string;
  /** Its own name for itself (a claim: the page says so for a registered client). */
  name: string;
  /** Where the client is, as the consent page shows it: its document's host, or its redirect's. */
  host: string;
  /** Where it may be sent back: exactly these, or a loopback IP's on any port (RFC 8252 7.3). */
  redirectUris: string[];
  /** "document": named by a metadata document at its https id; "registered": RFC 7591. */
  kind: "document" | "registered";
}

/** Why a client or its redirect URI is refused (shown on the platform's page, never redirected). */
export class ClientError extends Error {}

const LOOPBACK_IPS = new Set(["127.0.0.1", "[::1]"]);

/**
 * A host that names no public site: an IPv4 address, a single label (an IPv6 address too: a
 * URL writes it in hex, without a dot), or a local-only name.
 */
function isPrivateHost(hostname: string): boolean {
  return (
    /^[\d.]+$/.test(hostname) ||
    !hostname.includes(".") ||
    /(^|\.)(localhost|local|internal|home\.arpa)$/.test(hostname)
  );
}

/**
 * A redirect URI any client may register: https, http on a loopback address (RFC 8252
 * 7.3; `localhost` only as an exact URI), or a private-use scheme with a dot (RFC 8252
 * 7.1, such as `com.example.app:/callback`); never with a fragment or credentials.
 * Returns the reason it is refused, or undefined.
 */
function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_URI_LENGTH) return `is longer than ${MAX_URI_LENGTH} characters`;
  const url = URL.parse(uri);
  if (!url) return "is not an absolute URI";
  // Even an empty one ("#"), which the parsed URL does not show.
  if (uri.includes("#")) return "must not have a fragment";
  if (url.username || url.password) return "must not carry credentials";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:") {
    return LOOPBACK_IPS.has(url.hostname) || url.hostname === "localhost"
      ? undefined
      : "may use http only on a loopback address (127.0.0.1, [::1], localhost)";
  }
  if (!url.protocol.includes(".")) {
    return "must be https, loopback http, or a private-use scheme named after a domain (RFC 8252 7.1)";
  }
  return undefined;
}

/** Whether `requested` is one of `registered`: exactly, or a loopback IP's URI on another port. */
export function redirectMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const asked = URL.parse(requested);
  if (asked?.protocol !== "http:" || !LOOPBACK_IPS.has(asked.hostname)) return false;
  const portless = (url: URL) => {
    const copy = new URL(url);
    copy.port = "";
    return copy.href;
  };
  return registered.some((uri) => portless(new URL(uri)) === portless(asked));
}

/** How a client is shown where it will be sent back: its host, or what a local one is. */
export function hostOf(uri: string): string {
  const url = new URL(uri);
  if (url.protocol === "https:") return url.host;
  if (url.protocol === "http:") return `an app on this computer (${url.host})`;
  return `an app on this device (${url.protocol.slice(0, -1)})`;
}

const RedirectUris = z
  .array(z.string().check(z.refine((uri) => redirectUriProblem(uri) === undefined)))
  .check(z.minLength(1), z.maxLength(MAX_REDIRECT_URIS));

/** What a client may say of itself, in a document or a registration (RFC 7591 section 2). */
const ClientMetadata = z.looseObject({
  client_name: PetNameSchema,
  redirect_uris: RedirectUris,
  token_endpoint_auth_method: z.optional(z.literal("none")),
  grant_types: z.optional(
    z
      .array(z.enum(["authorization_code", "refresh_token"]))
      .check(z.refine((types) => types.includes("authorization_code"))),
  ),
  response_types: z.optional(z.array(z.literal("code"))),
});
/**
 * What a client registering itself may say: any token_endpoint_auth_method, which it is
 * registered without (RFC 7591 3.2.1: the server may replace a value, and its response says
 * `none`): every client here is public and proves itself with PKCE.
 */
const Registration = z.extend(ClientMetadata, {
  token_endpoint_auth_method: z.optional(z.string()),
});
/** What a client says of itself, as parsed (extra fields kept, unread). */
export type ClientMetadata = z.infer<typeof Registration>;

/**
 * A client's metadata, in its document or its registration (which may name any authentication
 * method, registered as none), or the problems with it as one sentence.
 */
export function parseClientMetadata(
  value: unknown,
  from: "document" | "registration",
): { ok: true; metadata: ClientMetadata } | { ok: false; problem: string } {
  const parsed = (from === "document" ? ClientMetadata : Registration).safeParse(value);
  if (parsed.success) return { ok: true, metadata: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.join(".") || "the body";
    if (issue.path[0] === "redirect_uris" && issue.path.length === 2) {
      const uri = (value as { redirect_uris: unknown[] }).redirect_uris[Number(issue.path[1])];
      return `${field} ${typeof uri === "string" ? (redirectUriProblem(uri) ?? issue.message) : "must be a string"}`;
    }
    if (issue.path[0] === "redirect_uris") {
      return `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs`;
    }
    if (issue.path[0] === "token_endpoint_auth_method") {
      return from === "document"
        ? 'token_endpoint_auth_method must be "none": clients here are public and use PKCE'
        : "token_endpoint_auth_method must be a string";
    }
    if (issue.path[0] === "grant_types") return 'grant_types must include "authorization_code"';
    if (issue.path[0] === "response_types") return 'response_types may only be ["code"]';
    return `${field} ${issue.message}`;
  });
  return { ok: false, problem: `${problems.join("; ")}.` };
}

/** Where a client's metadata document may be: https on the default port, a public host, a path. */
function documentUrlProblem(clientId: string): string | undefined {
  const url = URL.parse(clientId);
  if (url?.protocol !== "https:") return "is not an https URL";
  if (url.href !== clientId) return "is not in its normal form";
  if (url.username || url.password || url.hash) return "must not carry credentials or a fragment";
  if (url.port !== "") return "must use the default https port";
  if (url.pathname === "/") return "must have a path";
  if (isPrivateHost(url.hostname)) return "must name a public host";
  return undefined;
}

/**
 * The client whose id is the https URL of its metadata document: fetched without
 * following redirects, within CLIENT_DOCUMENT_TIMEOUT_MS and CLIENT_DOCUMENT_MAX_BYTES,
 * its `client_id` equal to the URL, no secret, and every https redirect URI on the
 * document's own origin (so a document cannot make this server send people elsewhere).
 */
export async function clientFromDocument(fetcher: typeof fetch, clientId: string): Promise<Client> {
  const problem = documentUrlProblem(clientId);
  if (problem) throw new ClientError(`The client_id ${problem}.`);
  let response: Response;
  try {
    response = await fetcher(clientId, {
      redirect: "manual",
      headers: { Accept: "application/json" },
      signal: AbortSignal.timeout(CLIENT_DOCUMENT_TIMEOUT_MS),
    });
  } catch {
    throw new ClientError("The client's metadata document could not be fetched.");
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new ClientError(
      `The client's metadata document responded with ${response.status}, not 200 (redirects are not followed).`,
    );
  }
  let document: unknown;
  try {
    const bytes = await readBodyCapped(response.body, CLIENT_DOCUMENT_MAX_BYTES);
    document = JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes),
    );
  } catch {
    throw new ClientError(
      `The client's metadata document is not JSON of at most ${CLIENT_DOCUMENT_MAX_BYTES} bytes.`,
    );
  }
  // Whatever it is (an object, an array, a string, null), it must name itself.
  const fields = document as Record<string, unknown> | null;
  if (fields?.client_id !== clientId) {
    throw new ClientError("The client's metadata document does not name itself as its client_id.");
  }
  if ("client_secret" in fields || "client_secret_expires_at" in fields) {
    throw new ClientError("The client's metadata document must not carry a client secret.");
  }
  const parsed = parseClientMetadata(document, "document");
  if (!parsed.ok) throw new ClientError(`The client's metadata document: ${parsed.problem}`);
  const origin = new URL(clientId).origin;
  const elsewhere = parsed.metadata.redirect_uris.find((uri) => {
    const url = new URL(uri);
    return url.protocol === "https:" && url.origin !== origin;
  });
  if (elsewhere) {
    throw new ClientError(
      `The client's metadata document names a redirect URI on another site (${new URL(elsewhere).host}); its https redirect URIs must be on ${new URL(clientId).host}.`,
    );
  }
  return {
    id: clientId,
    name: parsed.metadata.client_name,
    host: new URL(clientId).host,
    redirectUris: parsed.metadata.redirect_uris,
    kind: "document",
  };
}

/** A registered client's id: `mcpc_` and 128 random bits. */
export function newClientId(): string {
  return `mcpc_${base64url(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/** How a registered client is shown: its name, and the host of its first redirect URI. */
export function registeredClient(row: {
  client_id: string;
  client_name: string;
  redirect_uris: string;
}): Client {
  // 1 to MAX_REDIRECT_URIS, as it registered them.
  const redirectUris = JSON.parse(row.redirect_uris) as [string, ...string[]];
  return {
    id: row.client_id,
    name: row.client_name,
    host: hostOf(redirectUris[0]),
    redirectUris,
    kind: "registered",
  };
}
