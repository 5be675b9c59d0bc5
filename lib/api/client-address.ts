/**
 * Who is on the other end of a request, for throttling failed sign-ins. Next.js gives route handlers no
 * socket, and it keeps a client's own `X-Forwarded-For` as it came, so a header cannot be trusted. As each
 * request arrives, the HTTP server's diagnostics channel stamps the socket's address on it under a header
 * name random to this process (a client cannot guess it, so cannot forge it). `X-Forwarded-For` is read
 * only when that address is one of TRUSTED_PROXIES (addresses or CIDR ranges, as proxy-addr reads them:
 * also `loopback`, `linklocal`, `uniquelocal`), and then only as far as the proxies we trust go.
 */
import { randomBytes } from "node:crypto";
import diagnostics from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import proxyaddr from "proxy-addr";
import { getConfig } from "@/lib/config";
import { processSingleton } from "@/lib/process-state";

const state = processSingleton("api.peer", () => ({ header: `x-turnscope-peer-${randomBytes(8).toString("hex")}`, installed: false }));

/** The header name this process stamps peers under (tests stamp requests they build the same way). */
export function peerHeader(): string {
  return state.header;
}

/** Stamp every request the HTTP server receives with its socket's address (once per process, at start). */
export function installPeerStamp(): void {
  if (state.installed) return;
  state.installed = true;
  diagnostics.subscribe("http.server.request.start", (message) => {
    const { request, socket } = message as { request: IncomingMessage; socket: Socket };
    request.headers[state.header] = socket.remoteAddress ?? "unknown";
  });
}

let trustCache: { value: string; trust: (addr: string, i: number) => boolean } | undefined;

function trustFunction(): (addr: string, i: number) => boolean {
  const value = getConfig().TRUSTED_PROXIES ?? "";
  if (trustCache?.value !== value) {
    const list = value.split(",").map((s) => s.trim()).filter(Boolean);
    trustCache = { value, trust: list.length ? proxyaddr.compile(list) : () => false };
  }
  return trustCache.trust;
}

/**
 * The client's address: the stamped socket address, or, behind a trusted proxy, the last address in
 * `X-Forwarded-For` that is not itself a trusted proxy. `unknown` for requests no server stamped
 * (route handlers called directly, as in unit tests).
 */
export function clientAddress(req: Request): string {
  const peer = req.headers.get(state.header);
  if (!peer) return "unknown";
  const forwarded = req.headers.get("x-forwarded-for") ?? undefined;
  const fake = { socket: { remoteAddress: peer }, headers: { "x-forwarded-for": forwarded } } as unknown as IncomingMessage;
  return canonicalAddress(proxyaddr(fake, trustFunction()));
}

/**
 * A client on this machine: a loopback address, or `unknown` (a request no HTTP server received, such as a
 * route handler called in process).
 */
export function isLocalClient(address: string): boolean {
  return address === "unknown" || address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);
}

/** One spelling per client: an IPv4 address mapped into IPv6 (`::ffff:10.0.0.1`) is the IPv4 address (they counted as two clients). */
export function canonicalAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1] : address.toLowerCase();
}
