// How a request is sent: attempts under time limits, retries of what a retry can cure, no
// redirect followed, and every failure thrown as a PetStoreError.
import { PetStoreError, TRANSIENT } from "./errors.ts";
import { isJson, retryAfterSeconds } from "./headers.ts";

export interface RetryOptions {
  /** Retries after the first attempt; 0 turns retrying off. Default 2. */
  retries?: number;
  /** The wait before the first retry in ms, doubled before each next one (with jitter). Default 500. */
  baseDelayMs?: number;
  /**
   * The longest wait in ms. Default 60 000. A response whose `Retry-After` asks for longer,
   * or for a wait that would end past the call's time limit, is not waited for.
   */
  maxDelayMs?: number;
}

/** How long a call may take, in ms. */
export interface TimeLimits {
  /** The whole call: every attempt and every wait between them. Default 30 000. */
  timeoutMs?: number;
  /** One attempt: the request sent and its whole response read. Default 10 000. */
  attemptTimeoutMs?: number;
}

/** A retry about to happen, as `onRetry` sees it. */
export interface RetryEvent {
  /** The request (its method and URL; the body was sent as given). */
  request: Request;
  /** The attempt that failed: 1 for the first. */
  attempt: number;
  /** Why: a 429, 502, 503 or 504 response, a network failure, or the attempt's timeout. */
  error: PetStoreError;
  /** The wait before the next attempt, in ms. */
  delayMs: number;
}

export interface SendOptions extends TimeLimits {
  retry?: RetryOptions | undefined;
  /** Called before each retry's wait: to log it, or to count it. */
  onRetry?: ((event: RetryEvent) => void) | undefined;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;

/** The attempts made for each response `send` returned. */
const attemptsMade = new WeakMap<Response, number>();
export const attemptsOf = (response: Response) => attemptsMade.get(response) ?? 1;
/** Responses after an attempt that may have reached the API and acted, its response lost. */
const afterLost = new WeakSet<Response>();
/**
 * Whether an earlier attempt of the call that returned `response` may have reached the API
 * and acted: no response, a timeout, or a 502, 503 or 504 (not a 429: the API limits first).
 */
export const afterLostResponse = (response: Response) => afterLost.has(response);

/**
 * The wait in ms before retry number `retry` (1 for the first) after `response`, or after
 * a failure without a response when `response` is undefined; undefined when not to retry.
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

/**
 * Whether to send `request` again after `response` (undefined: none came). A read, a keyed
 * create, a removal and a merge patch of values do, sent twice, what they do once. A change
 * under `If-Match` would meet its own first attempt as 412: it is sent again only after a
 * 429, which the API responses before it acts.
 */
function retryable({ method, headers }: Request, response: Response | undefined) {
  if (method === "PATCH" && headers.has("If-Match")) return response?.status === 429;
  return ["GET", "HEAD", "PATCH", "DELETE"].includes(method) || headers.has("Idempotency-Key");
}

/**
 * Sends `request` through `fetch`, each attempt within `attemptTimeoutMs` and all within
 * `timeoutMs`. What `retryable` allows (a keyed create sends the same key each time) is
 * retried after a network failure (a body cut short included), an attempt's timeout, 429,
 * 502, 503 and 504, while `retryDelay` allows and the wait ends within the time limit.
 * Returns the response with its body read; throws a PetStoreError when there is none, and
 * for a redirect, which is never followed.
 */
export async function send(
  fetch: (request: Request) => Promise<Response>,
  request: Request,
  options: SendOptions = {},
): Promise<Response> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, attemptTimeoutMs = DEFAULT_ATTEMPT_TIMEOUT_MS } = options;
  const deadline = Date.now() + timeoutMs;
  const idempotencyKey = request.headers.get("Idempotency-Key") ?? undefined;
  let lost = false;
  for (let attempt = 1; ; attempt++) {
    const left = deadline - Date.now();
    const limit =
      left < attemptTimeoutMs
        ? `The call's time limit ran out (timeoutMs: ${timeoutMs} ms)`
        : `The attempt's time limit ran out (attemptTimeoutMs: ${attemptTimeoutMs} ms)`;
    const outcome = await attemptOnce(fetch, request, Math.min(attemptTimeoutMs, left), limit);
    const failure = { attempts: attempt, idempotencyKey };
    if (outcome.kind === "abort") throw new PetStoreError({ ...outcome, ...failure });
    const { response } = outcome;
    if (response) attemptsMade.set(response, attempt);
    if (response && lost) afterLost.add(response);
    const redirect = response && redirected(request, response);
    if (redirect) throw new PetStoreError({ ...redirect, ...failure, kind: "response" });
    if (response && !TRANSIENT.includes(response.status)) return response;
    const error = new PetStoreError({
      ...outcome,
      ...failure,
      body:
        response &&
        (await response
          .clone()
          .json()
          .catch(() => undefined)),
    });
    const wait = retryable(request, response)
      ? retryDelay(attempt, response, options.retry)
      : undefined;
    if (wait === undefined || Date.now() + wait >= deadline) {
      if (response) return response;
      throw error;
    }
    lost ||= response?.status !== 429;
    options.onRetry?.({ request, attempt, error, delayMs: wait });
    if (!(await sleep(wait, request.signal))) {
      const reason = request.signal.reason;
      throw new PetStoreError({ kind: "abort", ...failure, cause: reason, message: "Aborted" });
    }
  }
}

type Outcome =
  | { kind: "response"; response: Response }
  | {
      kind: "network" | "timeout" | "abort";
      response?: undefined;
      cause: unknown;
      message: string;
    };

/**
 * A redirect is not the API's response (it never redirects): where it points, nothing is
 * sent. A 304 is a redirect too unless it responds to `If-None-Match`. In a browser, fetch
 * hides the redirect's status and headers (an "opaqueredirect" response).
 */
function redirected(request: Request, response: Response) {
  if (response.status === 0) return { message: "A redirect, not followed" }; // opaqueredirect
  const { status } = response;
  const conditional = status === 304 && request.headers.has("If-None-Match");
  if (status < 300 || status > 399 || conditional) return undefined;
  const to = response.headers.get("Location");
  return { response, message: `HTTP ${status}: a redirect${to ? ` to ${to}` : ""}, not followed` };
}

/**
 * One attempt within `limitMs`, its response's body read (a body that stalls is a timeout
 * too; a JSON body that does not parse was cut short, as a body shorter than its
 * `Content-Length` is); a `fetch` that ignores the abort signal is not waited for.
 */
async function attemptOnce(
  fetch: (request: Request) => Promise<Response>,
  request: Request,
  limitMs: number,
  limit: string,
): Promise<Outcome> {
  const caller = request.signal;
  if (caller.aborted) return { kind: "abort", cause: caller.reason, message: "Aborted" };
  const controller = new AbortController();
  const stop = () => controller.abort(caller.reason);
  const timer = setTimeout(() => controller.abort(), limitMs);
  caller.addEventListener("abort", stop);
  const stopped = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason));
  });
  stopped.catch(() => {});
  let responded = false;
  try {
    const init = { signal: controller.signal, redirect: "manual" } as const;
    const sent = fetch(new Request(request.clone(), init));
    sent.catch(() => {});
    const fetched = await Promise.race([sent, stopped]);
    if (fetched.status === 0) return { kind: "response", response: fetched }; // has no body
    responded = true;
    const body = fetched.body && (await Promise.race([fetched.arrayBuffer(), stopped]));
    const empty = request.method === "HEAD" || [204, 205, 304].includes(fetched.status);
    const { status, statusText, headers } = fetched;
    if (!empty && isJson(headers)) JSON.parse(new TextDecoder().decode(body ?? undefined));
    return {
      kind: "response",
      response: new Response(empty ? null : body, { status, statusText, headers }),
    };
  } catch (cause) {
    if (caller.aborted) return { kind: "abort", cause: caller.reason, message: "Aborted" };
    if (controller.signal.aborted) return { kind: "timeout", cause, message: limit };
    const why = `${responded ? "The response was cut short" : "No response"}: ${(cause as Error)?.message ?? cause}`;
    return { kind: "network", cause, message: why };
  } finally {
    clearTimeout(timer);
    caller.removeEventListener("abort", stop);
  }
}

/** Waits `ms`; false when `signal` aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const abort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", abort);
      resolve(true);
    }, ms);
    if (signal.aborted) abort();
    signal.addEventListener("abort", abort, { once: true });
  });
}
