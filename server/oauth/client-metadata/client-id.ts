/**
 * Which client ids are Client ID Metadata Document URLs
 * (draft-ietf-oauth-client-id-metadata-document): the id is the URL the hub
 * fetches, and the document there must name exactly this string as its
 * `client_id`. The id is compared as a string everywhere (grants, consent,
 * the cache), so only the one canonical spelling of a URL is accepted: two
 * spellings of one document would be two clients to the admin.
 */

/** Longer ids are refused: they are stored, shown and sealed in the ledger. */
export const MAX_CLIENT_ID_URL_LENGTH = 2048;

/** A client id that is a CIMD URL (https, a path other than "/", no fragment, no userinfo, no dot segments). */
export function isClientIdUrl(clientId: string): boolean {
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH) return false;
  // The WHATWG parser forgives what a string comparison would not (spaces,
  // tabs and newlines removed, backslashes read as slashes); refuse them
  // before parsing so the parsed URL is the string itself.
  if (!/^[\x21-\x7e]+$/.test(clientId) || clientId.includes("\\")) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.protocol !== "https:") return false;
  if (url.username !== "" || url.password !== "") return false;
  if (clientId.includes("#")) return false;
  if (url.pathname === "/" || url.pathname === "") return false;
  // Dot segments ("/a/../b", "/./", "%2e%2e") and every other
  // non-canonical spelling (upper-case scheme or host, default port, percent
  // escapes the parser normalises) make href differ from the input.
  if (url.href !== clientId) return false;
  // Defence in depth: the href comparison above already excludes these, as
  // the parser removes dot segments, escaped or not.
  for (const segment of url.pathname.split("/")) {
    const s = segment.toLowerCase();
    if (s === "." || s === ".." || s === "%2e" || s === "%2e%2e" || s === ".%2e" || s === "%2e.") return false;
  }
  return true;
}
