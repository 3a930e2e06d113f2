import { DatabaseUnavailableError } from "../errors.ts";

/** A D1 database or one of its sessions: what every query function accepts. */
export type Queryable = Pick<D1Database, "prepare" | "batch">;

/** Runs D1 work; any driver failure becomes DatabaseUnavailableError (503, no internals shown). */
export async function d1<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new DatabaseUnavailableError(err);
  }
}
