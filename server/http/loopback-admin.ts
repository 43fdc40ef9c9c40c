/**
 * The admin's pages live on http://localhost:PORT when no public URL is set
 * (the default loopback deployment), never on a loopback IP. Cookies do not
 * isolate ports, but they do isolate host names: keeping the admin on
 * `localhost` and OAuth clients' loopback redirects on 127.0.0.1 / [::1]
 * (RFC 8252 §8.3) means a client's callback listener never receives the
 * admin's cookie. A page asked for on a loopback IP is sent to localhost.
 *
 * Applied by bin/next-web.ts before Next sees the request; imports nothing.
 */

/** Where a page request should go instead, or null to serve it. `publicUrlSet`: LEASEHOLD_PUBLIC_URL is set (then the operator chose the host). */
export function loopbackIpPageRedirect(hostHeader: string | null, pathAndQuery: string, publicUrlSet: boolean): string | null {
  if (publicUrlSet || hostHeader === null) return null;
  const match = /^(\[[0-9a-f:.]+\]|[0-9.]+)(?::(\d{1,5}))?$/i.exec(hostHeader.trim());
  if (match === null) return null;
  const address = (match[1] as string).replace(/^\[|\]$/g, "").toLowerCase();
  const loopback = address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);
  if (!loopback) return null;
  const path = pathAndQuery.startsWith("/") && !pathAndQuery.startsWith("//") ? pathAndQuery : "/";
  return `http://localhost${match[2] === undefined ? "" : `:${match[2]}`}${path}`;
}
