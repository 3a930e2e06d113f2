// The part of autocannon's API the benchmark uses (the package ships no types).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  interface Request {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called with every answer to this request: the body as a string, the headers by name. */
    onResponse?: (
      status: number,
      body: string,
      context: unknown,
      headers: Record<string, string | string[]>,
    ) => void;
  }

  interface Options {
    url: string;
    requests?: Request[];
    /** Replace `[<id>]` in each request (URL, headers, body) with a fresh unique id. */
    idReplacement?: boolean;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    timeout?: number;
  }

  interface Result {
    /** Seconds actually run. */
    duration: number;
    requests: { total: number; sent: number; average: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    "2xx": number;
    statusCodeStats: Record<string, { count: number }>;
  }

  interface Instance extends EventEmitter {
    on(
      event: "response",
      listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void,
    ): this;
    stop(): void;
  }

  function autocannon(
    options: Options,
    callback: (err: Error | null, result: Result) => void,
  ): Instance;
  export default autocannon;
}
