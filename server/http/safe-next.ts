/**
 * Where to go after sign-in: the `next` a sign-in link carries, reduced to a
 * path on the hub page's own origin, or "/" on any doubt (no open redirect).
 *
 * Prefix checks are not enough, because the browser's URL parser is not the
 * string the check saw: it drops ASCII tab, CR and LF anywhere (`/\t/evil`
 * becomes `//evil`, another host), reads `\` as `/` in http(s) URLs, and
 * removes `.` segments after the prefix was looked at (`/.//evil` becomes the
 * path `//evil`, which `location.assign` resolves to another host). So:
 *
 * 1. refuse control characters (\p{Cc}), format characters (\p{Cf}: bidi and
 *    zero-width marks that hide what a link says), any separator or space
 *    (\p{Z}, U+2028 included: a path the hub builds is always
 *    percent-encoded) and backslashes — nothing legitimate carries them;
 * 2. resolve with the WHATWG parser against the page's origin, exactly as
 *    the browser will, and refuse any other origin (`//host`, `https://…`,
 *    `javascript:`, `data:`);
 * 3. return the resolved path + query + fragment, and refuse it when it
 *    begins with `//` (a protocol-relative URL once handed to the browser).
 *
 * Pure and import-free: the sign-in form runs it in the browser with
 * `window.location.origin`; server code passes the hub's public origin.
 */
const REFUSED_CHARACTERS = /[\p{Cc}\p{Cf}\p{Z}\\]/u;

export function safeNext(next: string | null | undefined, pageOrigin: string): string {
  if (next === null || next === undefined || next === "" || REFUSED_CHARACTERS.test(next)) return "/";
  let origin: string;
  let resolved: URL;
  try {
    origin = new URL(pageOrigin).origin;
    resolved = new URL(next, origin);
  } catch {
    return "/";
  }
  if (origin === "null" || resolved.origin !== origin) return "/";
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  return path.startsWith("/") && !path.startsWith("//") ? path : "/";
}
