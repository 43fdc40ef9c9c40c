/**
 * OAuth scopes of the hub's MCP resource, and what each means in Leasehold
 * terms. Two, matching the one distinction an `lh_` token's scope makes at
 * the protocol level: `mcp:read` — the read-only tools only; `mcp:write` —
 * every tool (not read-only). Tools, hosts and expiry are narrowed by the
 * admin at consent, exactly as `leasehold token create` narrows them.
 */
export const SCOPE_READ = "mcp:read";
export const SCOPE_WRITE = "mcp:write";
export const SUPPORTED_SCOPES = [SCOPE_READ, SCOPE_WRITE] as const;
export type OAuthScope = (typeof SUPPORTED_SCOPES)[number];

/** What a 401 / 403 names as needed (RFC 6750 `scope`): everything a client may ask for; the admin narrows. */
export const CHALLENGE_SCOPE = SUPPORTED_SCOPES.join(" ");

export const SCOPE_MEANING: Record<OAuthScope, string> = {
  "mcp:read": "read-only tools only (health, hosts_list, list_capabilities, audit queries, approval_wait …): nothing that changes a host",
  "mcp:write": "every tool, including ones that change hosts (run_command, file writes, service control …), each still subject to policy and approval",
};

export type ScopeParse = { ok: true; scopes: OAuthScope[] } | { ok: false; unknown: string[] };

/**
 * The `scope` parameter (space-separated, RFC 6749 §3.3). Omitted or empty
 * means `mcp:read` (least privilege; a client that wants more says so).
 * `mcp:write` implies `mcp:read`. Unknown scopes are an error, not ignored:
 * the client would otherwise believe it had them.
 */
export function parseScopeParam(value: string | null | undefined): ScopeParse {
  const words = (value ?? "").split(" ").filter((w) => w !== "");
  const unknown = words.filter((w) => !(SUPPORTED_SCOPES as readonly string[]).includes(w));
  if (unknown.length > 0) return { ok: false, unknown };
  if (words.includes(SCOPE_WRITE)) return { ok: true, scopes: [SCOPE_READ, SCOPE_WRITE] };
  return { ok: true, scopes: [SCOPE_READ] };
}

/** The scopes a grant holds, from its read-only flag. */
export function scopesOf(readOnly: boolean): OAuthScope[] {
  return readOnly ? [SCOPE_READ] : [SCOPE_READ, SCOPE_WRITE];
}
