import { authenticateAdminSession } from "../admins";
import type { Database } from "../db";
import { authenticateToken } from "../tokens";
import type { HubHealth } from "./read-health";

/** What `/api/health` tells a caller who shows no credential: enough for a load balancer or a probe. */
export interface PublicHealth {
  status: HubHealth["status"];
  version: string;
}

export function publicHealth(health: HubHealth): PublicHealth {
  return { status: health.status, version: health.version };
}

/**
 * Whether a request may see the full health (host names, guest-reported
 * witness failures, the ledger and database state): an admin session
 * cookie, or a valid agent token as `Authorization: Bearer` — a token
 * already reads the same figures through the MCP `health` tool, so this
 * shows it nothing new. Anything else, including a malformed or revoked
 * credential, gets the public view (never an error: probes must not fail).
 */
export async function mayReadFullHealth(db: Database, headers: Headers, options: { secure?: boolean } = {}): Promise<boolean> {
  if ((await authenticateAdminSession(db, headers, options)) !== undefined) return true;
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(headers.get("authorization") ?? "");
  if (match?.[1] === undefined) return false;
  return (await authenticateToken(db, match[1])).ok;
}
