/**
 * OAuth scopes of the hub's MCP resource, and what each means in Leasehold
 * terms, matching the distinctions an `lh_` token's scope makes at the
 * protocol level: `mcp:read` — the read-only tools only; `mcp:write` —
 * every tool (not read-only); `mcp:observe-any` — `mcp:write` with the
 * observe scope `any` (`leasehold token create --observe any`: every
 * run_command runs at once under the observe lease, whatever its risk).
 * Tools, hosts and expiry are narrowed by the admin at consent, exactly as
 * `leasehold token create` narrows them.
 */
export const SCOPE_READ = "mcp:read";
export const SCOPE_WRITE = "mcp:write";
export const SCOPE_OBSERVE_ANY = "mcp:observe-any";
export const SUPPORTED_SCOPES = [SCOPE_READ, SCOPE_WRITE, SCOPE_OBSERVE_ANY] as const;
export type OAuthScope = (typeof SUPPORTED_SCOPES)[number];

/**
 * What a 401 / 403 names as needed (RFC 6750 `scope`): read and write; the
 * admin narrows. `mcp:observe-any` is left out: clients ask for what a
 * challenge names, and the sandbox-first scope is only ever asked for on
 * purpose.
 */
export const CHALLENGE_SCOPE = [SCOPE_READ, SCOPE_WRITE].join(" ");

export const SCOPE_MEANING: Record<OAuthScope, string> = {
  "mcp:read": "read-only tools only (health, hosts_list, list_capabilities, audit queries, approval_wait …): nothing that changes a host",
  "mcp:write": "every tool, including ones that change hosts (run_command, file writes, service control …), each still subject to policy and approval",
  "mcp:observe-any":
    "sandbox-first: every run_command runs at once, with no person, under the observe lease — the workspace read-only, /tmp thrown away, no network, cgroup limits — whatever its risk (even critical); a command that needs writes or network is still held for a person",
};

export type ScopeParse = { ok: true; scopes: OAuthScope[] } | { ok: false; unknown: string[] };

/**
 * The `scope` parameter (space-separated, RFC 6749 §3.3). Omitted or empty
 * means `mcp:read` (least privilege; a client that wants more says so).
 * `mcp:write` implies `mcp:read`; `mcp:observe-any` implies both (it is a
 * way of using write). Unknown scopes are an error, not ignored: the client
 * would otherwise believe it had them.
 */
export function parseScopeParam(value: string | null | undefined): ScopeParse {
  const words = (value ?? "").split(" ").filter((w) => w !== "");
  const unknown = words.filter((w) => !(SUPPORTED_SCOPES as readonly string[]).includes(w));
  if (unknown.length > 0) return { ok: false, unknown };
  if (words.includes(SCOPE_OBSERVE_ANY)) return { ok: true, scopes: [SCOPE_READ, SCOPE_WRITE, SCOPE_OBSERVE_ANY] };
  if (words.includes(SCOPE_WRITE)) return { ok: true, scopes: [SCOPE_READ, SCOPE_WRITE] };
  return { ok: true, scopes: [SCOPE_READ] };
}

/** The scopes a grant holds, from its read-only flag and observe scope. */
export function scopesOf(readOnly: boolean, observe: "judged" | "any" = "judged"): OAuthScope[] {
  if (readOnly) return [SCOPE_READ];
  return observe === "any" ? [SCOPE_READ, SCOPE_WRITE, SCOPE_OBSERVE_ANY] : [SCOPE_READ, SCOPE_WRITE];
}
