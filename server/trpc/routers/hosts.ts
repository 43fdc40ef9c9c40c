/**
 * Hosts for the browser admin: what each guest last reported (online state,
 * enforcement tier, per-capability readiness, its ceiling), the leases held
 * on it (an owner breaks one exactly as `leasehold lease break` does), and
 * "enrol a host" (an owner mints the one-time code `leasehold host
 * enrol-code` mints, and gets the same command to run on the host).
 * Also the capability list, and enabling an opt-in capability by its exact
 * id (server/capabilities/enablement.ts).
 */
import { z } from "zod";
import { ROLES } from "../../admins";
import { capabilityConsequence, computeHostReadiness, computeReadiness, setCapabilityEnabled } from "../../capabilities";
import { HOST_NAME_PATTERN, createEnrolCode, enrolCommand, enrolSteps, listHostSummaries, publicUrlNote } from "../../hosts";
import { hashActor } from "../../ledger/entry";
import { listActiveLeases, revokeLease } from "../../leases";
import { readHostReports } from "../../mcp/tools/host-reports";
import { capabilityRegistry } from "../../mcp/tools/listing";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

/** Enrolment codes live 1 minute to 24 hours (createEnrolCode's own bounds); the page offers minutes. */
const ttlMinutes = z.number().int().min(1).max(24 * 60).default(15);

export const hostsRouter = createRouter({
  list: roleProcedure(ROLES.deciders).query(({ ctx }) =>
    channel(async () => {
      const db = ctx.runtime.database.handle.db;
      const now = new Date();
      const [summaries, reports, leases] = await Promise.all([listHostSummaries(db, now.getTime()), readHostReports(db, now), listActiveLeases(db)]);
      const registry = capabilityRegistry();
      const active = registry.list().filter((c) => c.active);
      return summaries.map((host) => {
        const report = reports.find((r) => r.host === host.name);
        return {
          ...host,
          capabilities: active.map((c) => {
            const manifest = registry.get(c.id)?.manifest;
            const readiness = report === undefined || manifest === undefined ? null : computeHostReadiness(manifest, report, { now });
            const worker = report?.workers.find((w) => w.capability === c.id);
            return {
              id: c.id,
              state: readiness?.state ?? "unavailable",
              reasons: readiness?.reasons ?? ["the host has not reported"],
              // Requested (the hub's pin) beside verified (what the host hashed): the page shows both.
              requested_digest: c.worker_digest,
              verified_digest: worker?.digest ?? null,
            };
          }),
          leases: leases.filter((l) => l.host === host.name),
        };
      });
    }),
  ),
  enrolCode: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ name: z.string().regex(HOST_NAME_PATTERN, "a host name: lower-case letters, digits, . _ - (up to 63)"), ttlMinutes }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const publicUrl = ctx.runtime.config.publicUrl;
        const result = await createEnrolCode(ctx.runtime.database.handle.db, { name: input.name, ttlMs: input.ttlMinutes * 60_000, actor: hashActor("admin", ctx.session.adminId) });
        return { name: result.name, expiresAt: result.expiresAt.toISOString(), code: result.code, command: enrolCommand(publicUrl, result.code), steps: enrolSteps(publicUrl, result.code), note: publicUrlNote(publicUrl) };
      }),
    ),
  breakLease: roleProcedure(ROLES.owner)
    .input(z.strictObject({ leaseId: z.string().max(64) }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const ended = await revokeLease(ctx.runtime.database.handle.db, input.leaseId, { id: ctx.session.adminId });
        return { id: ended.id, mode: ended.mode };
      }),
    ),
  capabilities: roleProcedure(ROLES.deciders).query(({ ctx }) =>
    channel(async () => {
      const now = new Date();
      const reports = await readHostReports(ctx.runtime.database.handle.db, now);
      const registry = capabilityRegistry();
      return registry.list().map((c) => {
        const manifest = registry.get(c.id)?.manifest;
        const readiness = manifest === undefined ? null : computeReadiness(manifest, reports, { now });
        return { ...c, readiness, consequence: manifest === undefined ? null : capabilityConsequence(manifest) };
      });
    }),
  ),
  /** Enable or disable an opt-in capability by its exact id (sealed; owner, re-authenticated). */
  setCapabilityEnabled: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ id: z.string().min(1).max(64), enabled: z.boolean() }))
    .mutation(({ ctx, input }) =>
      channel(() => setCapabilityEnabled(ctx.runtime.database.handle.db, capabilityRegistry(), { id: input.id, enabled: input.enabled, adminId: ctx.session.adminId })),
    ),
});
