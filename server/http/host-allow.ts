/**
 * DNS-rebinding defence for every route: a browser tricked into resolving an
 * attacker's name to this hub still sends the attacker's name in `Host`, so
 * only the names the hub is known by are served — the public URL's host,
 * the address it listens on, and loopback (the CLI, the local guest, tests).
 * Hostnames are compared without the port (the listener's port is the only
 * one that reaches it).
 */

const LOOPBACK = ["localhost", "127.0.0.1", "::1"];

/** A Host header's hostname, lower-cased, without port, brackets or a trailing dot; null when malformed. */
export function hostnameOf(host: string): string | null {
  if (host.length === 0 || host.length > 255) return null;
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return null;
  }
  // Anything beyond host[:port] (credentials, a path) is not a Host header.
  if (url.username !== "" || url.password !== "" || url.pathname !== "/" || url.search !== "" || url.hash !== "") return null;
  if (url.host !== host.toLowerCase() && url.host !== host.toLowerCase().replace(/:80$/, "")) return null;
  return url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
}

export function allowedHostnames(publicUrl: string, listenHost: string): Set<string> {
  const names = new Set(LOOPBACK);
  names.add(new URL(publicUrl).hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase());
  const listen = listenHost.replace(/^\[|\]$/g, "").toLowerCase();
  // A wildcard listener has no name of its own; its callers use the public URL or loopback.
  if (listen !== "0.0.0.0" && listen !== "::" && listen !== "") names.add(listen);
  return names;
}

export function hostAllowed(host: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (host === undefined) return false;
  const name = hostnameOf(host);
  return name !== null && allowed.has(name);
}
