// A proxy in front of `npm run dev` for `npm run client:outside`, on Node's http module:
// `/<fault>/<times>/<tag>/v1/...` forwards `/v1/...`, and the first <times> requests under
// `/<fault>/<times>/<tag>` meet <fault>:
//   drop      forwarded, then the connection is closed: the API acted, the answer is lost
//   delay     forwarded, the answer held for 5 s
//   503r1     answered by the proxy, nothing forwarded: the status (429, 502, 503, 504)
//             and, with r<seconds>, Retry-After; the Error object, or a gateway's page
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export const DELAY_MS = 5_000;
const FAULT_PATH = /^\/([^/]+)\/(\d+)\/([^/]+)(\/.*)$/;
const STATUS = /^(\d{3})(?:r(\d+))?$/;
const CODES: Record<string, string> = { "429": "rate_limited", "503": "service_unavailable" };
/** Headers that belong to one connection, or that fetch has already undone. */
const HOP = ["host", "connection", "content-length", "transfer-encoding", "content-encoding"];

/** Starts the proxy for `target` (an origin) on a free port of 127.0.0.1. */
export async function startFaultProxy(target: string) {
  const seen = new Map<string, number>();
  const server = createServer(async (req, res) => {
    try {
      const [, fault = "", times = "0", tag = "", rest = "/"] =
        FAULT_PATH.exec(req.url ?? "") ?? [];
      const prefix = `${fault}/${times}/${tag}`;
      const count = (seen.get(prefix) ?? 0) + 1;
      seen.set(prefix, count);
      const active = count <= Number(times);
      const [, status, retryAfter] = STATUS.exec(fault) ?? [];
      if (active && status) {
        const code = CODES[status];
        const headers = {
          "Content-Type": code ? "application/json" : "text/html",
          "X-Request-Id": `proxy-${count}`,
          ...(retryAfter ? { "Retry-After": retryAfter } : {}),
        };
        res.writeHead(Number(status), headers);
        const message = `injected by the fault proxy (${prefix})`;
        res.end(
          code ? JSON.stringify({ code, message, status: Number(status) }) : `<h1>${status}</h1>`,
        );
        return;
      }
      const answer = await forward(req, new URL(rest, target));
      const payload = Buffer.from(await answer.arrayBuffer());
      if (active && fault === "drop") return void req.socket.destroy();
      if (active && fault === "delay") await sleep(DELAY_MS);
      const headers = [...answer.headers].filter(([name]) => !HOP.includes(name));
      res.writeHead(answer.status, Object.fromEntries(headers)).end(payload);
    } catch {
      req.socket.destroy(); // the client gave up, or the API is gone
    }
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

async function forward(req: IncomingMessage, url: URL): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP.includes(name)) headers.set(name, String(value));
  }
  const body = Buffer.concat(await req.toArray());
  return fetch(url, { method: req.method, headers, body: body.length > 0 ? body : undefined });
}
