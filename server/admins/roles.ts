/**
 * Roles (one per admin). What each may do is declared per tRPC procedure
 * (server/trpc/init.ts `roleProcedure`) and per CLI command; this file only
 * names them.
 * - owner: everything, including users, tokens, capabilities and settings.
 * - approver: decide held actions (and the narrow grant "allow similar"
 *   proposes), see hosts, actions and the audit log.
 * - auditor: read-only — audit log, actions, evidence.
 */
import { z } from "zod";

export const ADMIN_ROLES = ["owner", "approver", "auditor"] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];
export const adminRoleSchema = z.enum(ADMIN_ROLES, { message: "role must be owner, approver or auditor" });

/** Role sets procedures declare, named for what they allow. */
export const ROLES = {
  /** Any signed-in admin. */
  anyone: ADMIN_ROLES,
  /** People who decide actions (and see what they decide on). */
  deciders: ["owner", "approver"],
  /** Reading actions, evidence and the audit log. */
  readers: ADMIN_ROLES,
  owner: ["owner"],
} as const satisfies Record<string, readonly AdminRole[]>;
