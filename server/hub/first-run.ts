import { sql } from "drizzle-orm";
import type { HubConfig } from "../config";
import { executeRows, type Database } from "../db";
import { createAdmin } from "../admins";
import { knownToolNames } from "../mcp";
import { createToken } from "../tokens";

/**
 * The first start of a hub with no agent tokens issues one (30 days) and
 * returns the lines to print, so a new user can connect an MCP client right
 * away. It happens once: the token is stored only as a hash, so later starts
 * cannot show it again (`leasehold token create` / `mcp-config --create`
 * issue more). Issuing it is sealed in the ledger like any other token.
 */
export async function issueFirstAgentToken(db: Database, config: HubConfig, now = new Date()): Promise<string[]> {
  const [row] = await executeRows<{ n: number | string }>(db, sql`select count(*)::int as n from agent_tokens`);
  if (Number(row?.n ?? 0) > 0) return [];
  const { token, secret } = await createToken(
    db,
    { name: "first-agent", readOnly: false, tools: null, hosts: null, expiresAt: new Date(now.getTime() + 30 * 86_400_000), createdBy: "first-start" },
    { knownTools: knownToolNames(), now },
  );
  const url = `${config.publicUrl}/api/mcp`;
  return [
    `  MCP token:  ${secret}  (token "${token.name}", expires ${token.expiresAt?.toISOString().slice(0, 10)}; shown only now)`,
    `  connect:    claude mcp add --transport http leasehold ${url} --header "Authorization: Bearer ${secret}"`,
  ];
}

export const FIRST_ADMIN_NAME = "admin";

/**
 * The first start of a hub with no admins creates one, `admin`, and returns
 * the lines that show its generated password — once: only the scrypt hash is
 * stored (`leasehold admin create` makes more). Approvals, grants and revocations name
 * an admin (`--as admin`). Sealed as admin/1.
 */
export async function issueFirstAdmin(db: Database): Promise<string[]> {
  const [row] = await executeRows<{ n: number | string }>(db, sql`select count(*)::int as n from admin_users`);
  if (Number(row?.n ?? 0) > 0) return [];
  const { admin, password } = await createAdmin(db, FIRST_ADMIN_NAME);
  return [`  admin:      ${admin.username} / ${password}  (shown only now; CLI decisions name it: --as ${admin.username})`];
}
