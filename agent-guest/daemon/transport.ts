/**
 * Which hub URLs the guest will talk to. Job documents, scrubbed output and
 * evidence travel on this connection; request signatures protect their
 * integrity, not their confidentiality. So plain HTTP is accepted only when
 * the traffic cannot leave this machine's network stack — a loopback
 * address, `localhost`, or an address assigned to one of this stack's own
 * interfaces (the local guest of a hub listening on such an address) — or
 * when the operator says so with `--insecure-http`. Anything else needs
 * https://. A host name over plain HTTP counts as remote: its resolution can
 * change.
 */
import { isIP } from "node:net";
import os from "node:os";
import { UsageError } from "../../common/cli/args";
import { LeaseholdError, isLoopbackHost } from "../../server/trust";

function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) out.add(a.address);
  return out;
}

export type HubTransport = { ok: true; warning: string | null } | { ok: false; reason: string };

/** The hub URL as given on the command line; a malformed one is a usage mistake. */
export function parseHubUrl(hub: string): URL {
  let url: URL;
  try {
    url = new URL(hub);
  } catch {
    throw new UsageError(`--hub ${JSON.stringify(hub)} is not a URL (e.g. https://hub.example:8700)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--hub must be an http(s) URL, not ${url.protocol}`);
  return url;
}

export function hubTransport(url: URL, options: { insecureHttp?: boolean; localAddresses?: ReadonlySet<string> } = {}): HubTransport {
  if (url.protocol === "https:") return { ok: true, warning: null };
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isLoopbackHost(host) || (isIP(host) !== 0 && (options.localAddresses ?? ownAddresses()).has(host))) return { ok: true, warning: null };
  const risk = `plain HTTP to ${url.host} would carry job documents, scrubbed output and evidence across the network unencrypted (signatures protect their integrity, not their confidentiality)`;
  if (options.insecureHttp === true) return { ok: true, warning: `${risk}; allowed by --insecure-http` };
  return { ok: false, reason: `refusing ${risk}; use https://, or pass --insecure-http to accept that` };
}

/** Throws POLICY_REFUSED for a hub URL `hubTransport` refuses; returns its warning, if any. */
export function requireHubTransport(hub: string, options: { insecureHttp?: boolean } = {}): string | null {
  const verdict = hubTransport(parseHubUrl(hub), options);
  if (!verdict.ok) throw new LeaseholdError("POLICY_REFUSED", verdict.reason, { tier: "guest" });
  return verdict.warning;
}
