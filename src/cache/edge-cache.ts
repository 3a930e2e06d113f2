// The location's Cache API as the service uses it: a lookup that fails or hangs costs only
// the work it would have saved, never the response.

/** The Cache API calls the service makes; `caches.default` or a named cache in production. */
export type EdgeCache = Pick<Cache, "match" | "put">;

/** `work`'s value, or `undefined` once `ms` have passed (the work is then abandoned). */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([work, timeout]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}
