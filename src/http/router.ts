// The API's router: hono/tiny's PatternRouter (the smallest), its matches cached per method
// and path. The PatternRouter tests every route's pattern on every request, and most requests
// come to the same few paths.
import type { Result, Router } from "hono/router";
import { PatternRouter } from "hono/router/pattern-router";
import { boundedMap } from "../cache/bounded-map.ts";

/** How many matches are cached: any path may be sent, so the oldest give way. */
const MATCHES_CACHED = 1_000;

/** A router whose matches are cached until a route is added (Hono's routers return them read-only). */
export class CachedRouter<T> implements Router<T> {
  name = "CachedRouter";
  readonly #router = new PatternRouter<T>();
  #matches = boundedMap<string, Result<T>>(MATCHES_CACHED);

  add(method: string, path: string, handler: T): void {
    this.#router.add(method, path, handler);
    this.#matches = boundedMap(MATCHES_CACHED);
  }

  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    let result = this.#matches.get(key);
    if (result === undefined) {
      result = this.#router.match(method, path);
      this.#matches.set(key, result);
    }
    return result;
  }
}
