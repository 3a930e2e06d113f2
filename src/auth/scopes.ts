// The scopes live in src/scopes.ts, below src/http and src/db, which use them. This
// re-export keeps src/auth/verifier.ts and scripts/key-*.ts working until they import
// src/scopes.ts themselves; then it goes.
export * from "../scopes.ts";
