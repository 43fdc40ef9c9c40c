/**
 * Where passkeys work. WebAuthn binds a credential to a relying-party id, a
 * DOMAIN: an IP address can never be one, so a hub reached only at
 * http://10.0.0.5:8700 cannot use passkeys at all. Browsers also need a
 * secure context: https://, or http://localhost.
 *
 * The origins a passkey ceremony may come from:
 * - the public URL's origin (LEASEHOLD_PUBLIC_URL, or http://HOST:PORT),
 *   when its host is a name, not an IP address;
 * - http://localhost:PORT when the hub listens on loopback (the default,
 *   127.0.0.1): `npm start` prints that as the admin URL.
 * The rpID of a ceremony is the hostname of the page's origin. With no such
 * origin passkeys are off, with a message naming LEASEHOLD_PUBLIC_URL.
 */
import { LeaseholdError } from "../errors";

export interface PasskeySettings {
  publicUrl: string;
  host: string;
  port: number;
  /** LEASEHOLD_PASSKEY_APPROVAL_RISK. */
  passkeyApprovalRisk?: "high" | "critical" | "off";
}

/** The passkey settings of a hub configuration (a partial one, as some tests build, fails closed: threshold high, no origin). */
export function passkeySettingsOf(config: { publicUrl?: string; host?: string; port?: number; passkeyApprovalRisk?: "high" | "critical" | "off" }): PasskeySettings {
  return { publicUrl: config.publicUrl ?? "", host: config.host ?? "", port: config.port ?? 0, passkeyApprovalRisk: config.passkeyApprovalRisk ?? "high" };
}

export type RelyingParty = { available: true; origins: string[]; rpIds: string[] } | { available: false; reason: string };

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

export function isIpAddress(hostname: string): boolean {
  return IPV4.test(hostname) || hostname.includes(":") || hostname.startsWith("[");
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The admin URL a person should open: http://localhost:PORT when the hub listens on loopback and no public URL was set. */
export function adminUrlFor(settings: { publicUrl: string; host: string; port: number }, publicUrlSet: boolean): string {
  return !publicUrlSet && isLoopbackHost(settings.host) ? `http://localhost:${settings.port}` : settings.publicUrl;
}

export function relyingParty(settings: PasskeySettings): RelyingParty {
  const origins: string[] = [];
  let publicOrigin: URL | undefined;
  try {
    publicOrigin = new URL(settings.publicUrl);
  } catch {
    publicOrigin = undefined;
  }
  if (publicOrigin !== undefined && !isIpAddress(publicOrigin.hostname)) origins.push(publicOrigin.origin);
  if (settings.port > 0 && isLoopbackHost(settings.host)) {
    const local = `http://localhost:${settings.port}`;
    if (!origins.includes(local)) origins.push(local);
  }
  if (origins.length === 0) {
    return {
      available: false,
      reason: `passkeys are off: the hub's public URL ${settings.publicUrl} is an IP address, and WebAuthn needs a domain name as its relying-party id. Set LEASEHOLD_PUBLIC_URL to an https:// URL with a host name (or listen on loopback and open http://localhost:${settings.port}/)`,
    };
  }
  return { available: true, origins, rpIds: [...new Set(origins.map((o) => new URL(o).hostname))] };
}

/** The relying party for a ceremony started from `origin` (the page's Origin header); refused when passkeys are off there. */
export function ceremonyFor(settings: PasskeySettings, origin: string | null): { origin: string; rpId: string; rp: Extract<RelyingParty, { available: true }> } {
  const rp = relyingParty(settings);
  if (!rp.available) throw new LeaseholdError("FORBIDDEN", rp.reason, { tier: "hub", hint: "set LEASEHOLD_PUBLIC_URL to a URL with a host name" });
  const wanted = origin?.toLowerCase() ?? "";
  const match = rp.origins.find((o) => o.toLowerCase() === wanted);
  if (match === undefined) {
    throw new LeaseholdError("FORBIDDEN", `passkeys work on this hub at ${rp.origins.join(" or ")}; this page is at ${origin ?? "an unknown origin"}`, {
      tier: "hub",
      hint: `open ${rp.origins[0]}/`,
    });
  }
  return { origin: match, rpId: new URL(match).hostname, rp };
}
