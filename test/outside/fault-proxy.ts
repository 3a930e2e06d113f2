// A proxy in front of `npm run dev` for `npm run client:outside`, on Node's http module:
// `/<fault>/<times>/<tag>/v1/...` forwards `/v1/...`, and the first <times> requests under
// `/<fault>/<times>/<tag>` meet <fault>:
//   drop      forwarded, then the connection is closed: the API acted, the response is lost
//   delay     forwarded, the response held for 5 s
//   cut       forwarded, half the response's body sent, then the connection closed: with its
//   cutclose  Content-Length (a short body), or without (the close looks like the body's end)
//   status200 forwarded, the response's status made 200 (a create's 201 too)
//   shape     forwarded, the response's body made `{"pets":[]}`: JSON, not the operation's
//   away      responded with 307 to another origin (a second server), nothing forwarded
//   here      responded with 308 to the same URL on this origin, forwarded from there
//   503r1     served by the proxy, nothing forwarded: the status (200, 429, 502, 503, 504)
//             and, with r<seconds>, Retry-After; the Error object, or an HTML page
// `GET /elsewhere/<tag>` lists what reached the other origin from that tag's requests.
import { createServer, type IncomingMessage, type Server, STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

const DELAY_MS = 5_000;
const FAULT_PATH = /^\/([^/]+)\/(\d+)\/([^/]+)(\/.*)$/;
const STATUS = /^(\d{3})(?:r(\d+))?$/;
const CODES: Record<string, string> = { "429": "rate_limited", "503": "service_unavailable" };
/** Headers that belong to one connection, or that fetch has already undone. */
const HOP = ["host", "connection", "content-length", "transfer-encoding", "content-encoding"];
/** What the other origin responds: JSON, and neither a page nor a pet. */
const NOT_THE_OPERATIONS = '{"pets":[]}';

/** Starts the proxy for `target` (an origin), and its other origin, on free ports of 127.0.0.1. */
export async function startFaultProxy(target: string) {
  const seen = new Map<string, number>();
  /** What reached the other origin, by tag: method, path, and the headers that matter. */
  const elsewhere = new Map<string, string[]>();
  const elsewhereServer = createServer(async (req, res) => {
    const [, tag = "", rest = ""] = /^\/([^/]+)(.*)$/.exec(req.url ?? "") ?? [];
    const body = Buffer.concat(await req.toArray());
    const sent = ["authorization", "idempotency-key"].filter((name) => req.headers[name]);
    const what = `${req.method} ${rest}${sent.map((name) => `, ${name}`).join("")}`;
    elsewhere.set(tag, [...(elsewhere.get(tag) ?? []), `${what}, ${body.length} bytes`]);
    res.writeHead(200, { "Content-Type": "application/json" }).end(NOT_THE_OPERATIONS);
  });
  const other = await listen(elsewhereServer);
  const server = createServer(async (req, res) => {
    try {
      const tagged = /^\/elsewhere\/([^/]+)$/.exec(req.url ?? "");
      if (tagged) return void res.end(JSON.stringify(elsewhere.get(tagged[1] ?? "") ?? []));
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
      if (active && (fault === "away" || fault === "here")) {
        const location = fault === "away" ? `${other}/${tag}${rest}` : `/pass/0/${tag}${rest}`;
        return void res.writeHead(fault === "away" ? 307 : 308, { Location: location }).end();
      }
      const upstream = await forward(req, new URL(rest, target));
      let payload = Buffer.from(await upstream.arrayBuffer());
      if (active && fault === "drop") return void req.socket.destroy();
      if (active && fault === "delay") await sleep(DELAY_MS);
      if (active && fault === "shape") payload = Buffer.from(NOT_THE_OPERATIONS);
      const headers = [...upstream.headers].filter(([name]) => !HOP.includes(name));
      const sentStatus = active && fault === "status200" ? 200 : upstream.status;
      if (active && (fault === "cut" || fault === "cutclose")) {
        const length = fault === "cut" ? [["Content-Length", `${payload.length}`]] : [];
        const lines = [...headers, ...length, ["Connection", "close"]].map((h) => h.join(": "));
        const head = `HTTP/1.1 ${sentStatus} ${STATUS_CODES[sentStatus]}\r\n${lines.join("\r\n")}`;
        const half = payload.subarray(0, payload.length >> 1);
        return void req.socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), half]));
      }
      res.writeHead(sentStatus, Object.fromEntries(headers)).end(payload);
    } catch {
      req.socket.destroy(); // the client gave up, or the API is gone
    }
  });
  return {
    url: await listen(server),
    stop: () => {
      for (const each of [server, elsewhereServer]) {
        each.closeAllConnections();
        each.close();
      }
    },
  };
}

/** Listens on a free port of 127.0.0.1; the server's origin. */
async function listen(server: Server): Promise<string> {
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function forward(req: IncomingMessage, url: URL): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP.includes(name)) headers.set(name, String(value));
  }
  const body = Buffer.concat(await req.toArray());
  return fetch(url, { method: req.method, headers, body: body.length > 0 ? body : undefined });
}
