/**
 * What a target may reach and carry (issue 48): the door out is closed by design, not by a list of
 * patches. A target is written by annotators, but it makes the *server* send requests, so:
 *  - `${env:NAME}` in a header reads only names an admin listed in TARGET_SECRET_ENV (never API_TOKEN,
 *    OPENAI_API_KEY or DATABASE_URL unless an admin put them there);
 *  - addresses in TARGET_DENY_NETWORKS (link-local and cloud metadata by default) are refused, checked on
 *    the address actually connected (lib/targets/http.ts), unless TARGET_ALLOW_NETWORKS lets them through;
 *  - credentials inside a URL (`user:pass@`, query values) are shown only to admins, and never written into
 *    an error or a conversation's meta.
 */
import { BlockList, isIP } from "node:net";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";

export const ENV_REFERENCE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Cloud metadata names that resolve to a link-local address inside the cloud (and may not resolve here). */
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

function blockList(ranges: string, setting: string): BlockList {
  const list = new BlockList();
  for (const raw of ranges.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [address, bits] = raw.split("/");
    const family = isIP(address);
    if (!family) throw new Error(`${setting}: ${raw} is not an IP address or CIDR range`);
    const type = family === 6 ? "ipv6" : "ipv4";
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) throw new Error(`${setting}: ${raw} has a bad prefix length`);
    list.addSubnet(address, prefix, type);
  }
  return list;
}

let lists: { key: string; deny: BlockList; allow: BlockList } | undefined;

function networkLists(): { deny: BlockList; allow: BlockList } {
  const cfg = getConfig();
  const key = `${cfg.TARGET_DENY_NETWORKS}|${cfg.TARGET_ALLOW_NETWORKS ?? ""}`;
  if (lists?.key !== key) lists = { key, deny: blockList(cfg.TARGET_DENY_NETWORKS, "TARGET_DENY_NETWORKS"), allow: blockList(cfg.TARGET_ALLOW_NETWORKS ?? "", "TARGET_ALLOW_NETWORKS") };
  return lists;
}

/** An IPv4-mapped IPv6 address (`::ffff:169.254.169.254`) is the IPv4 address it maps. */
function plainAddress(address: string): { address: string; type: "ipv4" | "ipv6" } {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return { address: mapped[1], type: "ipv4" };
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(bare);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1], 16);
    const lo = parseInt(hexMapped[2], 16);
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, type: "ipv4" };
  }
  return { address: bare, type: isIP(bare) === 6 ? "ipv6" : "ipv4" };
}

/** Why a target may not connect to this IP address, or null when it may. */
export function addressRefusal(address: string): string | null {
  const { address: ip, type } = plainAddress(address);
  if (!isIP(ip)) return null;
  const { deny, allow } = networkLists();
  if (allow.check(ip, type)) return null;
  if (deny.check(ip, type)) return `${ip} is in TARGET_DENY_NETWORKS (link-local, cloud metadata and unspecified addresses are refused by default; an admin may allow a range with TARGET_ALLOW_NETWORKS)`;
  return null;
}

/** Why a target may not name this host (a literal address or a metadata name), or null; names are checked again when connecting. */
export function hostRefusal(hostname: string): string | null {
  const host = hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (METADATA_NAMES.has(host)) return `${host} is a cloud metadata service, which targets may not reach`;
  return isIP(host) ? addressRefusal(host) : null;
}

/** The environment names a header may read (TARGET_SECRET_ENV). */
export function allowedSecretEnv(): Set<string> {
  return new Set((getConfig().TARGET_SECRET_ENV ?? "").split(",").map((s) => s.trim()).filter(Boolean));
}

/** Every `${env:NAME}` a header value names that is not on the allow-list. */
export function refusedEnvNames(headers: Record<string, string> | null | undefined): string[] {
  const allowed = allowedSecretEnv();
  const out: string[] = [];
  for (const value of Object.values(headers ?? {})) for (const m of value.matchAll(ENV_REFERENCE)) if (!allowed.has(m[1]) && !out.includes(m[1])) out.push(m[1]);
  return out;
}

/** Refuse (422) a target that would read an unlisted environment variable or point at a refused host. */
export function checkTargetPolicy(t: { url: string; headers?: Record<string, string> | null }): void {
  const refused = refusedEnvNames(t.headers);
  if (refused.length > 0) {
    const allowed = [...allowedSecretEnv()];
    throw new AppError(
      "unprocessable",
      `headers may read only the environment variables an admin listed in TARGET_SECRET_ENV (${allowed.length ? allowed.join(", ") : "none are listed"}); not ${refused.join(", ")}`,
      [{ path: "headers", message: `\${env:${refused[0]}} is not in TARGET_SECRET_ENV` }],
    );
  }
  const problem = hostRefusal(new URL(t.url).hostname);
  if (problem) throw new AppError("unprocessable", `The target's url is refused: ${problem}`, [{ path: "url", message: problem }]);
}

/** The URL with its credentials hidden: `user:pass@` and every query value become `***`. */
export function maskUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (!u.username && !u.password && !u.search) return url;
  if (u.username || u.password) {
    u.username = "***";
    u.password = u.password ? "***" : "";
  }
  const masked = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join("&");
  u.search = masked ? `?${masked}` : "";
  return u.toString().replace(/%2A%2A%2A/g, "***");
}

/** The pieces of a URL that are credentials (userinfo, query values), to take out of any text. */
function secretsOf(url: string): string[] {
  try {
    const u = new URL(url);
    const out = [u.username, u.password, decodeURIComponent(u.username), decodeURIComponent(u.password), ...[...u.searchParams.values()], ...u.search.slice(1).split("&").map((p) => p.split("=").slice(1).join("="))];
    return [...new Set(out.filter((s) => s.length >= 3))].sort((a, b) => b.length - a.length);
  } catch {
    return [];
  }
}

/** Text with a target URL's credentials (and the header secrets given) replaced by `***`. */
export function scrubSecrets(text: string, url: string, extra: string[] = []): string {
  let out = text.split(url).join(maskUrl(url));
  for (const secret of [...secretsOf(url), ...extra.filter((s) => s.length >= 4)]) out = out.split(secret).join("***");
  return out;
}
