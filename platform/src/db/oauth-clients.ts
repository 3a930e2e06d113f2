// The oauth_clients table (migration 0014): the clients that registered themselves (RFC 7591),
// each with its redirect URIs and whether a grant of its ever made a key.
import type { Queryable } from "../../../src/db/database.ts";
import { d1 } from "../../../src/db/database.ts";

/** Stores a registered client (RFC 7591 3.1): its id, name and redirect URIs (JSON). */
export async function storeClient(
  db: Queryable,
  client: { id: string; name: string; redirectUris: string[]; now: number },
): Promise<void> {
  await d1(() =>
    db
      .prepare(
        "INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_at) VALUES (?1, ?2, ?3, ?4)",
      )
      .bind(client.id, client.name, JSON.stringify(client.redirectUris), client.now)
      .run(),
  );
}

/** The row of a registered client, or null (a client named by a metadata document has none). */
export function findClientRow(db: Queryable, clientId: string) {
  return d1(() =>
    db
      .prepare(
        "SELECT client_id, client_name, redirect_uris FROM oauth_clients WHERE client_id = ?1",
      )
      .bind(clientId)
      .first<{ client_id: string; client_name: string; redirect_uris: string }>(),
  );
}
