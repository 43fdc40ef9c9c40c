/**
 * CSRF defence for the browser channel's mutations (tRPC POST): the request
 * must carry an Origin, and it must be the origin the page was served from —
 * the request's own scheme://Host (the Host is already on the hub's
 * allow-list, see host-allow.ts) or the public URL's origin. A browser always
 * sends Origin on a cross-site or same-site POST; a missing one means a
 * non-browser client, which has no business posting to tRPC. `SameSite=Lax`
 * on the session cookie is the second layer, not the only one.
 */
export type OriginVerdict = { ok: true } | { ok: false; message: string };

export function checkSameOrigin(request: { method: string; headers: Headers; url: string }, publicUrl: string): OriginVerdict {
  if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS") return { ok: true };
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return { ok: false, message: "a state-changing request needs an Origin header from the admin page" };
  const host = request.headers.get("host");
  const scheme = new URL(publicUrl).protocol;
  const own = host === null ? [] : [`${scheme}//${host}`.toLowerCase()];
  const allowed = new Set([new URL(publicUrl).origin.toLowerCase(), ...own]);
  if (!allowed.has(origin.toLowerCase())) return { ok: false, message: `Origin ${origin} is not this hub's` };
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return { ok: false, message: `a ${site} request may not change state` };
  return { ok: true };
}
