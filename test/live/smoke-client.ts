// How the smoke test sends a request: to the deployment under test and nowhere else (a URL
// on another origin fails before any request), never following a redirect (one could carry
// the key elsewhere), the key only where asked for, pinned to a version when --pin says so.
// The developer platform's checks get a client of their own, for its origin and no key.
import { expect } from "vitest";
import type { SmokeOptions } from "../../scripts/smoke.ts";

export interface SmokeResponse {
  status: number;
  headers: Headers;
  /** The body, with the key replaced should the deployment echo it. */
  text: string;
}

export function smokeClient(options: SmokeOptions, apiKey: string, fetchImpl = fetch) {
  return async function send(
    method: string,
    target: string,
    init: { key?: boolean; headers?: Record<string, string>; body?: string } = {},
  ): Promise<SmokeResponse> {
    const url = new URL(target, options.base);
    expect(url.origin, `refused to send a request to ${url.href}`).toBe(options.base);
    const headers = new Headers(init.headers);
    if (init.key) {
      expect(apiKey, "this client sends no key").not.toBe("");
      headers.set("Authorization", `Bearer ${apiKey}`);
    }
    if (options.pin) headers.set("Cloudflare-Workers-Version-Overrides", options.pin);
    const response = await fetchImpl(url, {
      method,
      headers,
      body: init.body,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const body = await response.text();
    const text = apiKey ? body.replaceAll(apiKey, "[SMOKE_API_KEY]") : body;
    const redirect = response.status >= 300 && response.status < 400;
    expect(redirect, `${method} ${url.pathname}: a ${response.status} redirect`).toBe(false);
    return { status: response.status, headers: response.headers, text };
  };
}
