// The API's router: hono/tiny's PatternRouter (the smallest), its matches cached per method
// and path. The PatternRouter tests every route's pattern on every request, and most requests
// come to the same few paths.
import type { Result } from "hono/router";
import { PatternRouter } from "hono/router/pattern-router";
import { boundedMap } from "../cache/bounded-map.ts";

/** How many matches are cached: any path may be sent, so the oldest give way. */
const MATCHES_CACHED = 1_000;

/** The PatternRouter, its matches cached until a route is added (Hono only reads a match). */
export class CachedRouter<T> extends PatternRouter<T> {
  #matches = boundedMap<string, Result<T>>(MATCHES_CACHED);

  override add(method: string, path: string, handler: T): void {
    super.add(method, path, handler);
    this.#matches = boundedMap(MATCHES_CACHED);
  }

  override match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    let result = this.#matches.get(key);
    if (result === undefined) {
      result = super.match(method, path);
      this.#matches.set(key, result);
    }
    return result;
  }
}
