import { retryAfterSeconds } from "./headers.ts";

export interface RetryOptions {
  /** Retries after the first attempt; 0 turns retrying off. Default 2. */
  retries?: number;
  /** The wait before the first retry in ms, doubled before each next one (with jitter). Default 500. */
  baseDelayMs?: number;
  /**
   * The longest wait in ms. Default 60 000, the longest `Retry-After` the API sends (a
   * 429). An answer that asks for longer is not waited for: it is thrown at once.
   */
  maxDelayMs?: number;
}

/** Answers a retry can cure: rate limited (429), database briefly unavailable (503). */
const TRANSIENT = [429, 503];

/**
 * The wait in ms before retry number `retry` (1 for the first) after `response`, or after
 * a network error when `response` is undefined; undefined when not to retry.
 */
export function retryDelay(
  retry: number,
  response: Response | undefined,
  options: RetryOptions = {},
  now = Date.now(),
): number | undefined {
  const { retries = 2, baseDelayMs = 500, maxDelayMs = 60_000 } = options;
  if (retry > retries || (response && !TRANSIENT.includes(response.status))) return undefined;
  const asked = response && retryAfterSeconds(response.headers.get("Retry-After"), now);
  if (asked !== undefined) return asked * 1000 <= maxDelayMs ? asked * 1000 : undefined;
  // Jitter: clients that failed together do not all come back at the same instant.
  return Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1)) * (0.5 + Math.random() / 2);
}

/** Whether sending `request` twice does what sending it once does. */
const repeatable = (request: Request) =>
  ["GET", "HEAD"].includes(request.method) || request.headers.has("Idempotency-Key");

/**
 * `send`, retried on network errors, 429 and 503 while `retryDelay` allows, for reads and
 * for writes that carry an `Idempotency-Key` (each retry sends the same key). Any other
 * answer, a 4xx above all, is returned as it came.
 */
export function retrying(
  send: (request: Request) => Promise<Response>,
  options?: RetryOptions,
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let retry = 1; ; retry++) {
      const [response, error] = await send(request.clone()).then(
        (answer) => [answer, undefined] as const,
        (failure: unknown) => [undefined, failure] as const,
      );
      const wait =
        repeatable(request) && !request.signal.aborted
          ? retryDelay(retry, response, options)
          : undefined;
      if (wait === undefined) {
        if (response) return response;
        throw error;
      }
      await response?.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", abort);
      resolve();
    }, ms);
    signal.addEventListener("abort", abort, { once: true });
  });
}
