// The scopes an API key can carry (docs/keys.md, "Managing keys"), and how they are
// stored. Each operation names its scope once, in its file of src/operations/; the scope
// middleware (src/auth/middleware.ts) enforces it.

export const SCOPES = ["pets:read", "pets:write", "orders:read"] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What each scope allows, for the OpenAPI document; which operations need it is each
 * operation's own `security` there (the table's `scope`).
 */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  "pets:read": "Read animals. Safe in a web page.",
  "pets:write": "Add, change and remove animals. Keep it on a server.",
  "orders:read": "Read store orders.",
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The stored form: known scopes, each once, in SCOPES order, space-separated. */
export function formatScopes(scopes: Iterable<Scope>): string {
  const set = new Set(scopes);
  return SCOPES.filter((s) => set.has(s)).join(" ");
}

/** Reads the stored form; unknown words are dropped (a key never gains a scope by a typo). */
export function parseScopes(stored: string): Scope[] {
  const words = new Set(stored.split(" "));
  return SCOPES.filter((s) => words.has(s));
}
