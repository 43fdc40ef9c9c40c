import { and, eq, inArray, isNull } from "drizzle-orm";
import { digestOf } from "../../ledger/entry";
import { acquireLease, listLeases, opaqueHolderId, releaseLease, type LeaseRow } from "../../leases";
import { hosts } from "../../db/schema";
import { LeaseholdError } from "../../errors";
import { LEASE_ACQUIRE_SCHEMA, LEASE_RELEASE_SCHEMA, LEASE_STATUS_SCHEMA } from "./output-schemas";
import { leaseAcquireText, leaseReleaseText, leaseStatusText } from "./text";
import type { HubTool, ToolContext } from "./tool";

/**
 * Host leases for agents (docs/design.md#leases) through server/leases: the
 * owner is this token and this MCP session — the same holder the pipeline
 * uses for the session's actions, so a lease taken here covers them. A
 * session's end (DELETE, idle expiry) releases its leases (endpoint.ts).
 */

const MAX_TTL_S = 3600;

/** How the pipeline describes a token caller, so HOST_BUSY reads the same from either path. */
function holderDescription(ctx: ToolContext): string {
  const session = ctx.sessionDigest === null ? "no session" : `session ${digestOf(ctx.sessionDigest).slice(7, 15)}`;
  return `agent token ${JSON.stringify(ctx.token.name)} (${session})`;
}

async function hostByName(ctx: ToolContext, name: string): Promise<{ id: string; name: string }> {
  if (ctx.token.hosts !== null && !ctx.token.hosts.includes(name)) {
    throw new LeaseholdError("FORBIDDEN", `this token's scope does not cover host ${name} (refused by a hub check)`, { tier: "hub" });
  }
  const [row] = await ctx.runtime.database.handle.db
    .select({ id: hosts.id, name: hosts.name })
    .from(hosts)
    .where(and(eq(hosts.name, name), isNull(hosts.removedAt)));
  if (row === undefined) throw new LeaseholdError("NOT_FOUND", `no enrolled host named ${JSON.stringify(name)}`, { tier: "hub", hint: "hosts_list shows enrolled hosts" });
  return row;
}

function shapeLease(lease: LeaseRow, hostName: string | null, ctx: ToolContext): Record<string, unknown> {
  const mine = lease.ownerKind === "token" && lease.ownerId === ctx.token.id && lease.sessionId === ctx.sessionDigest;
  return {
    lease_id: lease.id,
    host: hostName,
    mode: lease.mode,
    label: lease.label,
    // Another holder is an opaque id to an agent (its token name is for admins: `leasehold lease list`).
    holder_id: opaqueHolderId(lease),
    ...(mine ? { holder: lease.description } : {}),
    mine,
    created_at: lease.createdAt.toISOString(),
    expires_at: lease.expiresAt.toISOString(),
    idle_expires_at: lease.idleExpiresAt.toISOString(),
  };
}

const LEASE_ID = { type: "string", maxLength: 36, pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$" } as const;

export const leaseAcquireTool: HubTool = {
  name: "lease_acquire",
  title: "Acquire a host lease",
  description:
    "Takes a lease on a host for this session: `exclusive` (default; only this session may run changing actions there) or `observe` (shared). Reuses this session's lease when it has one. Another session's exclusive lease → HOST_BUSY with when it ends and an opaque holder id (retryable). Leases lapse when idle (5 min) or at ttl_s, and end with the session.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["host"],
    properties: {
      host: { type: "string", minLength: 1, maxLength: 253, description: "Host name (hosts_list)." },
      mode: { type: "string", enum: ["exclusive", "observe"], description: "exclusive (default) or observe." },
      ttl_s: { type: "integer", minimum: 10, maximum: MAX_TTL_S, description: `Hard lifetime in seconds (default 900, max ${MAX_TTL_S}).` },
    },
  },
  mutating: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: LEASE_ACQUIRE_SCHEMA,
  text: leaseAcquireText,
  async run(args, ctx) {
    const host = await hostByName(ctx, String(args.host));
    const mode = args.mode === "observe" ? "observe" : "exclusive";
    const { lease, acquired } = await acquireLease(ctx.runtime.database.handle.db, {
      hostId: host.id,
      mode,
      holder: { ownerKind: "token", ownerId: ctx.token.id, sessionId: ctx.sessionDigest, description: holderDescription(ctx) },
      ...(typeof args.ttl_s === "number" ? { timings: { ttlMs: args.ttl_s * 1000 } } : {}),
    });
    return { ...shapeLease(lease, host.name, ctx), acquired };
  },
};

export const leaseReleaseTool: HubTool = {
  name: "lease_release",
  title: "Release a host lease",
  description: "Gives back a lease this token holds. NOT_FOUND when it is not an active lease of this token.",
  inputSchema: { type: "object", additionalProperties: false, required: ["lease_id"], properties: { lease_id: { ...LEASE_ID, description: "The lease_id lease_acquire returned." } } },
  mutating: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: LEASE_RELEASE_SCHEMA,
  text: leaseReleaseText,
  async run(args, ctx) {
    const released = await releaseLease(ctx.runtime.database.handle.db, String(args.lease_id), { ownerKind: "token", ownerId: ctx.token.id });
    if (released === null) throw new LeaseholdError("NOT_FOUND", `no active lease ${String(args.lease_id)} of this token`, { tier: "hub", hint: "lease_status lists the active leases" });
    return { lease_id: released.id, released: true, released_at: released.releasedAt?.toISOString() ?? null };
  },
};

export const leaseStatusTool: HubTool = {
  name: "lease_status",
  title: "Host leases",
  description: "Active leases on the hosts this token may see (or on one host): holder, mode, expiry, and whether the lease is this session's.",
  inputSchema: { type: "object", additionalProperties: false, properties: { host: { type: "string", minLength: 1, maxLength: 253, description: "Only this host." } } },
  mutating: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: LEASE_STATUS_SCHEMA,
  text: leaseStatusText,
  async run(args, ctx) {
    const db = ctx.runtime.database.handle.db;
    const one = typeof args.host === "string" ? await hostByName(ctx, args.host) : undefined;
    const rows = await listLeases(db, one === undefined ? {} : { hostId: one.id });
    const ids = [...new Set(rows.map((r) => r.hostId))];
    const names = new Map((ids.length === 0 ? [] : await db.select({ id: hosts.id, name: hosts.name }).from(hosts).where(inArray(hosts.id, ids))).map((h) => [h.id, h.name]));
    const visible = rows.filter((r) => ctx.token.hosts === null || ctx.token.hosts.includes(names.get(r.hostId) ?? ""));
    return { leases: visible.map((r) => shapeLease(r, names.get(r.hostId) ?? null, ctx)) };
  },
};
