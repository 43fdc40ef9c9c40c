/**
 * Host paths through the real pipeline and database (docs/design.md#host-paths):
 * `mounts` and `label:` paths compiled against the host paths in the host's
 * stored health report; refusals that name the label; the rw risk raise; the
 * per-label lease; rollback held for a person at high. The guest that would
 * run the jobs is not here: its half (binds, snapshots, restore) is tested in
 * agent-guest and native.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { resumeAction, submitAction, type Caller, type PipelineDeps } from "../../server/actions";
import { approve } from "../../server/approvals";
import type { Database } from "../../server/db";
import { actions, approvals, grants, hosts, jobs, leases } from "../../server/db/schema";
import { createGrant } from "../../server/policy/grants";
import type { HostPathEntry, SnapshotSummary } from "../../server/trust/host-paths";
import { describeEachDatabase } from "../support/databases";
import { rejectionOf } from "../support/refusals";
import { allEntries, entriesOf, insertAdmin, insertHost, insertToken, PASSKEY_OFF, testDeps } from "./support";

const HOST_PATHS: HostPathEntry[] = [
  { label: "logs", path: "/var/log", mode: "ro" },
  { label: "app", path: "/srv/app", mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 1 << 30 },
  { label: "data", path: "/srv/data", mode: "rw" },
];
const SNAPSHOT: SnapshotSummary = { id: "snap-1", label: "app", created_at: "2026-12-06T07:00:00.000Z", bytes: 10, files: 1, tree_digest: `sha256:${"a".repeat(64)}` };

/** A host whose last health report listed `hostPaths` (absent: none) and `snapshots`. */
async function hostWith(d: Database, hostPaths: HostPathEntry[] | undefined, snapshots: SnapshotSummary[] = []): Promise<{ id: string; name: string }> {
  const host = await insertHost(d);
  await d.update(hosts).set({ health: hostPaths === undefined ? {} : { host_paths: hostPaths, snapshots } }).where(eq(hosts.id, host.id));
  return host;
}

function submit(deps: PipelineDeps, caller: Caller, operation: string, args: Record<string, unknown>) {
  return submitAction(deps, caller, { operation, arguments: args, channel: "mcp" }, { waitMs: 0 });
}

async function jobOf(d: Database, actionId: string): Promise<{ payload: { arguments: Record<string, unknown>; operation: string; sandbox: { mounts?: unknown } }; lease: { mode: string } }> {
  const [job] = await d.select().from(jobs).where(eq(jobs.actionId, actionId));
  if (job === undefined) throw new Error("no job");
  return job.payload as never;
}

/** Holds, approves as `admin` and resumes one call; returns the dispatched outcome or the refusal. */
async function heldThenApproved(deps: PipelineDeps, d: Database, admin: { id: string; username: string }, caller: Caller, operation: string, args: Record<string, unknown>) {
  const held = await rejectionOf(submit(deps, caller, operation, args));
  expect(held.code).toBe("APPROVAL_PENDING");
  const actionId = String(held.details?.["action_id"]);
  await approve(d, actionId, { id: admin.id, username: admin.username });
  return { actionId, resumed: resumeAction(deps, caller, actionId, { waitMs: 0 }) };
}

describeEachDatabase("host paths in the pipeline", (db) => {
  it("fs_read of a label path: the signed policy mounts the ceiling's path read-only, the worker gets the label path and no mounts, the reason names the readable host path", async () => {
    const d = db().handle.db;
    const host = await hostWith(d, HOST_PATHS);
    const outcome = await submit(testDeps(db().handle), await insertToken(d), "fs_read", { host: host.name, path: "logs:nginx//./access.log" });
    expect(outcome).toMatchObject({ status: "dispatched", decision: "auto_allow", risk: { level: "read_only" } });
    expect(outcome.risk.reasons.map((r) => r.message)).toContain("host path /var/log (label logs) becomes readable");
    const job = await jobOf(d, outcome.action_id);
    expect(job.payload.sandbox.mounts).toEqual([{ label: "logs", path: "/var/log", mode: "ro" }]);
    expect(job.payload.arguments).toMatchObject({ path: "logs:nginx/access.log" });
    expect(job.payload.arguments).not.toHaveProperty("mounts");
    expect(job.lease.mode).toBe("observe");
    // No mounts asked: the policy still says so, explicitly.
    const plain = await submit(testDeps(db().handle), await insertToken(d), "fs_read", { host: host.name, path: "notes.txt" });
    expect((await jobOf(d, plain.action_id)).payload.sandbox.mounts).toEqual([]);
  });

  it.each([
    ["an unlisted label in mounts", "run_command", { command: "ls /host/secrets", mounts: ["secrets"] }, "secrets", "mounts"],
    ["an unlisted label in mounts, as {label, mode}", "run_command", { command: "ls", mounts: ["logs", { label: "secrets", mode: "rw" }] }, "secrets", "mounts"],
    ["an unlisted label in an fs_write path", "fs_write", { path: "etc:shadow", content: "x" }, "etc", "path"],
    ["an unlisted label in an fs_read path", "fs_read", { path: "etc:passwd" }, "etc", "path"],
  ])("hostile: %s is INVALID_ARGUMENT at the hub naming the field and the label, sealed as refusal/1, nothing held or dispatched", async (_what, operation, args, label, field) => {
    const d = db().handle.db;
    const host = await hostWith(d, HOST_PATHS);
    const refused = await rejectionOf(submit(testDeps(db().handle), await insertToken(d), operation, { host: host.name, ...args }));
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toBe(`${field}: host ${host.name}'s ceiling lists no host path labelled ${label} (refused by a hub check)`);
    expect(refused.details).toMatchObject({ field, path: `/${field}`, label, listed: HOST_PATHS.map((entry) => entry.label) });
    const refusals = (await allEntries(d)).flatMap((e) => (e.type === "refusal/1" && e.data.host_id === host.id ? [e.data] : []));
    expect(refusals.map((data) => [data.stage, data.code])).toEqual([["prepare", "INVALID_ARGUMENT"]]);
    expect(await d.select().from(approvals).innerJoin(actions, eq(actions.id, approvals.actionId)).where(eq(actions.hostId, host.id))).toHaveLength(0);
    expect(await d.select().from(jobs).where(eq(jobs.hostId, host.id))).toHaveLength(0);
  });

  it.each([
    ["rw on a label the ceiling lists ro", "run_command", { command: "ls", mounts: [{ label: "logs", mode: "rw" }] }, "logs", /lists logs \(\/var\/log\) read-only; rw is refused, not narrowed/],
    ["fs_write to a label the ceiling lists ro", "fs_write", { path: "logs:x.log", content: "x" }, "logs", /read-only; rw is refused/],
    ["rw on a read-only operation", "fs_list", { path: "app:", mounts: [{ label: "app", mode: "rw" }] }, "app", /fs_list is read-only; it cannot take app read-write/],
  ])("hostile: %s is POLICY_REFUSED at the hub naming the label, sealed as refusal/1, nothing held or dispatched", async (_what, operation, args, label, message) => {
    const d = db().handle.db;
    const host = await hostWith(d, HOST_PATHS);
    const refused = await rejectionOf(submit(testDeps(db().handle), await insertToken(d), operation, { host: host.name, ...args }));
    expect(refused.code).toBe("POLICY_REFUSED");
    expect(refused.message).toMatch(message);
    expect(refused.details).toMatchObject({ field: "mounts", label });
    const refusals = (await allEntries(d)).flatMap((e) => (e.type === "refusal/1" && e.data.host_id === host.id ? [e.data] : []));
    expect(refusals.map((data) => [data.stage, data.code])).toEqual([["prepare", "POLICY_REFUSED"]]);
    expect(await d.select().from(jobs).where(eq(jobs.hostId, host.id))).toHaveLength(0);
  });

  it("hostile: a host whose health report lists no host paths refuses every mount, even ro", async () => {
    const d = db().handle.db;
    const caller = await insertToken(d);
    for (const hostPaths of [undefined, []]) {
      const host = await hostWith(d, hostPaths);
      const refused = await rejectionOf(submit(testDeps(db().handle), caller, "fs_read", { host: host.name, path: "logs:syslog" }));
      // An empty list names no label: certainly a bad argument. No list at all is refused as policy.
      expect(refused.code).toBe(hostPaths === undefined ? "POLICY_REFUSED" : "INVALID_ARGUMENT");
      expect(refused.message).toMatch(hostPaths === undefined ? /reports no host paths; label logs cannot be mounted/ : /^path: .*lists no host path labelled logs/);
    }
  });

  it.each([
    ["an upper-case label in mounts", "run_command", { command: "ls", mounts: ["Logs"] }],
    ["a label with a path in mounts", "run_command", { command: "ls", mounts: ["logs/../etc"] }],
    ["a label listed twice", "run_command", { command: "ls", mounts: ["app", { label: "app", mode: "rw" }] }],
    ["an upper-case label before ':'", "fs_read", { path: "Logs:syslog" }],
    ["an empty label before ':'", "fs_read", { path: ":syslog" }],
    ["'..' after a label", "fs_read", { path: "logs:../../etc/shadow" }],
    ["an absolute path after a label", "fs_read", { path: "logs:/etc/shadow" }],
    ["a label's root as the file to write", "fs_write", { path: "app:", content: "x" }],
  ])("hostile: %s is INVALID_ARGUMENT", async (_what, operation, args) => {
    const d = db().handle.db;
    const host = await hostWith(d, HOST_PATHS);
    const refused = await rejectionOf(submit(testDeps(db().handle), await insertToken(d), operation, { host: host.name, ...args }));
    expect(refused.code).toBe("INVALID_ARGUMENT");
  });

  it("a workspace file whose first segment contains ':' is still reachable as ./name", async () => {
    const d = db().handle.db;
    const host = await hostWith(d, undefined);
    const outcome = await submit(testDeps(db().handle), await insertToken(d), "fs_read", { host: host.name, path: "./Logs:old.txt" });
    const job = await jobOf(d, outcome.action_id);
    expect(job.payload.arguments["path"]).toBe("Logs:old.txt");
    expect(job.payload.sandbox.mounts).toEqual([]);
  });

  it("a rw label raises a read-only command to medium naming the host path and its lease; an observe-any token is still held (the observe lease does not cover host paths)", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await hostWith(d, HOST_PATHS);
    const ro = await submit(deps, await insertToken(d), "run_command", { host: host.name, command: "ls /host/logs", mounts: ["logs"] });
    expect(ro).toMatchObject({ decision: "auto_allow", risk: { level: "read_only" } });
    for (const caller of [await insertToken(d), await insertToken(d, { observe: "any" })]) {
      const held = await rejectionOf(submit(deps, caller, "run_command", { host: host.name, command: "ls /host/app", mounts: ["logs", { label: "app", mode: "rw" }] }));
      expect(held.code).toBe("APPROVAL_PENDING");
      expect(held.details?.["risk"]).toBe("medium");
      const reasons = held.details?.["reasons"] as Array<{ level: string; rule: string; message: string }>;
      expect(reasons[0]).toMatchObject({ level: "medium", rule: "host_path.rw", message: "host path /srv/app (label app) becomes writable; the guest snapshots it before the job runs" });
      const decision = (await entriesOf(d, String(held.details?.["action_id"]))).find((e) => e.type === "decision/1");
      // Writes a label, not the workspace: the host lease is observe (the workspace is bound read-only), the label lease its own.
      expect(decision?.data).toMatchObject({ outcome: "hold", risk: "medium", lease: "observe" });
    }
    // A command that must also write the workspace asks for the write lease.
    const both = await rejectionOf(submit(deps, await insertToken(d), "run_command", { host: host.name, command: "cp /host/app/x ./", mounts: [{ label: "app", mode: "rw" }], lease: "write" }));
    expect((await entriesOf(d, String(both.details?.["action_id"]))).find((e) => e.type === "decision/1")?.data).toMatchObject({ outcome: "hold", lease: "exclusive" });
  });

  it("a rw run_command takes only its label lease beside an observe host lease: another session's exclusive host lease does not block it, nor it that session; its job gets the workspace read-only", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const admin = await insertAdmin(d);
    const host = await hostWith(d, HOST_PATHS);
    const writer = await insertToken(d);
    const other = await insertToken(d);
    await (await heldThenApproved(deps, d, admin, other, "run_command", { host: host.name, command: "rm -rf ./build" })).resumed;
    const a = await heldThenApproved(deps, d, admin, writer, "run_command", { host: host.name, command: "touch /host/app/y", mounts: [{ label: "app", mode: "rw" }] });
    expect(await a.resumed).toMatchObject({ status: "dispatched", sandbox: { lease: "observe" } });
    expect((await jobOf(d, a.actionId)).lease.mode).toBe("observe");
    const active = (await d.select().from(leases).where(eq(leases.hostId, host.id))).filter((l) => l.releasedAt === null);
    expect(active.filter((l) => l.ownerId === writer.tokenId).map((l) => [l.mode, l.label]).sort()).toEqual([["exclusive", "app"], ["observe", null]]);
    expect(active.filter((l) => l.ownerId === other.tokenId).map((l) => [l.mode, l.label])).toEqual([["exclusive", null]]);
  });

  it("hostile: a busy label never spends a grant use: a label write is held for a person whatever grants exist (a grant covers no `mounts`), and HOST_BUSY after approval leaves the grant's uses as they were", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const admin = await insertAdmin(d);
    const host = await hostWith(d, HOST_PATHS);
    const holder = await insertToken(d);
    await (await heldThenApproved(deps, d, admin, holder, "fs_write", { host: host.name, path: "app:a", content: "x" })).resumed;
    const grant = await createGrant(d, admin, { tool: "fs_write", host: host.name, maxRisk: "medium", uses: 2, expiresAt: new Date(Date.now() + 60_000) }, PASSKEY_OFF);
    const caller = await insertToken(d);
    for (let i = 0; i < 3; i += 1) {
      const { resumed } = await heldThenApproved(deps, d, admin, caller, "fs_write", { host: host.name, path: "app:b", content: `try ${i}` });
      const busy = await rejectionOf(resumed);
      expect(busy.code).toBe("HOST_BUSY");
      expect(busy.details).toMatchObject({ label: "app" });
    }
    expect((await d.select().from(grants).where(eq(grants.id, grant.id)))[0]?.usesRemaining).toBe(2);
    expect((await d.select().from(leases).where(eq(leases.hostId, host.id))).filter((l) => l.ownerId === caller.tokenId && l.releasedAt === null)).toEqual([]);
  });

  it("per-label leases: a second holder's rw of the same label is HOST_BUSY naming it; another label, and the same label on another host, are unaffected; each label lease is sealed with scope label", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const admin = await insertAdmin(d);
    const host = await hostWith(d, HOST_PATHS);
    const otherHost = await hostWith(d, HOST_PATHS);
    const first = await insertToken(d);
    const second = await insertToken(d);

    const a = await heldThenApproved(deps, d, admin, first, "fs_write", { host: host.name, path: "app:index.html", content: "v2" });
    const dispatched = await a.resumed;
    expect(dispatched).toMatchObject({ status: "dispatched", risk: { level: "medium" }, sandbox: { lease: "observe" } });
    const job = await jobOf(d, a.actionId);
    expect(job.payload.sandbox.mounts).toEqual([{ label: "app", path: "/srv/app", mode: "rw" }]);
    // Writes only under a label: the workspace is not leased exclusively, so other work on the host goes on.
    expect(job.lease.mode).toBe("observe");

    const b = await heldThenApproved(deps, d, admin, second, "fs_write", { host: host.name, path: "app:other.html", content: "x" });
    const busy = await rejectionOf(b.resumed);
    expect(busy.code).toBe("HOST_BUSY");
    expect(busy.retryable).toBe(true);
    expect(busy.message).toMatch(/host path label app on this host is leased read-write by another holder \(holder_[0-9a-f]{16}\)/);
    expect(busy.details).toMatchObject({ label: "app", mode: "exclusive" });

    const c = await heldThenApproved(deps, d, admin, second, "fs_write", { host: host.name, path: "data:x", content: "x" });
    expect(await c.resumed).toMatchObject({ status: "dispatched" });
    const e = await heldThenApproved(deps, d, admin, second, "fs_write", { host: otherHost.name, path: "app:index.html", content: "x" });
    expect(await e.resumed).toMatchObject({ status: "dispatched" });
    // The first holder again: its own label lease is reused, not a conflict.
    const again = await heldThenApproved(deps, d, admin, first, "fs_write", { host: host.name, path: "app:index.html", content: "v3" });
    expect(await again.resumed).toMatchObject({ status: "dispatched" });

    const labelLeases = (await d.select().from(leases).where(eq(leases.hostId, host.id))).filter((l) => l.label !== null).map((l) => [l.mode, l.label]).sort();
    expect(labelLeases).toEqual([["exclusive", "app"], ["exclusive", "data"]]);
    const sealed = (await entriesOf(d, a.actionId)).filter((entry) => entry.type === "lease/1").map((entry) => entry.data);
    expect(sealed).toContainEqual(expect.objectContaining({ scope: "label", mode: "exclusive", label: "app", event: "acquired" }));
  });

  it("hostile: the database itself refuses a second live lease row on one label of one host, and a label lease that is not exclusive", async () => {
    const d = db().handle.db;
    const host = await hostWith(d, HOST_PATHS);
    const row = (ownerId: string, mode = "exclusive") => ({ hostId: host.id, mode, label: "app", ownerKind: "token", ownerId, expiresAt: new Date(Date.now() + 60_000), idleExpiresAt: new Date(Date.now() + 60_000) });
    await d.insert(leases).values(row("a"));
    await expect(d.insert(leases).values(row("b"))).rejects.toThrow();
    await expect(d.insert(leases).values({ ...row("c", "observe"), label: "data" })).rejects.toThrow();
    // Released, the label is free again; another label was never taken.
    await d.update(leases).set({ releasedAt: new Date(), releaseReason: "released" }).where(eq(leases.hostId, host.id));
    await d.insert(leases).values(row("b"));
    await d.insert(leases).values({ ...row("c"), label: "data" });
  });

  it("a busy label gives back the host lease its call took and leaves the other labels free (all or none)", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const admin = await insertAdmin(d);
    const host = await hostWith(d, HOST_PATHS);
    const first = await insertToken(d);
    const second = await insertToken(d);
    await (await heldThenApproved(deps, d, admin, first, "fs_write", { host: host.name, path: "app:a", content: "x" })).resumed;
    const b = await heldThenApproved(deps, d, admin, second, "run_command", { host: host.name, command: "touch /host/data/x /host/app/y", mounts: [{ label: "data", mode: "rw" }, { label: "app", mode: "rw" }] });
    expect((await rejectionOf(b.resumed)).code).toBe("HOST_BUSY");
    const active = (await d.select().from(leases).where(eq(leases.hostId, host.id))).filter((l) => l.releasedAt === null);
    // The first holder's label lease (and the observe lease of its label-only write) stay; the second holds nothing.
    expect(active.filter((l) => l.ownerId === first.tokenId).map((l) => [l.mode, l.label]).sort()).toEqual([["exclusive", "app"], ["observe", null]]);
    expect(active.filter((l) => l.ownerId === second.tokenId)).toEqual([]);
    const released = (await d.select().from(leases).where(eq(leases.hostId, host.id))).filter((l) => l.ownerId === second.tokenId);
    expect(released.map((l) => [l.mode, l.label, l.releaseReason])).toEqual([["observe", null, "released"]]);
  });

  it("rollback: rated high naming the host path and snapshot, held for a person even with a matching grant, refused without a passkey at the threshold, dispatched after approval as operation rollback with the label mounted rw", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const admin = await insertAdmin(d);
    const host = await hostWith(d, HOST_PATHS, [SNAPSHOT]);
    await createGrant(d, admin, { tool: "rollback", host: host.name, maxRisk: "high", uses: 5, expiresAt: new Date(Date.now() + 60_000) }, PASSKEY_OFF);
    const caller = await insertToken(d);
    // At the default passkey threshold (high) a rollback is approved only with a passkey signature, like any held high action.
    const pending = await rejectionOf(submit(deps, caller, "rollback", { host: host.name, label: "app", snapshot_id: "snap-1", idempotency_key: "rb-1" }));
    const settings = { publicUrl: "http://localhost:8700", host: "localhost", port: 8700, passkeyApprovalRisk: "high" as const };
    const unsigned = await rejectionOf(approve(d, String(pending.details?.["action_id"]), { id: admin.id, username: admin.username }, null, { passkey: { settings } }));
    expect(unsigned.code).toBe("FORBIDDEN");
    expect(unsigned.message).toMatch(/approving a high-risk action needs a passkey signature/);
    const { actionId, resumed } = await heldThenApproved(deps, d, admin, caller, "rollback", { host: host.name, label: "app", snapshot_id: "snap-1" });
    const outcome = await resumed;
    expect(outcome).toMatchObject({ status: "dispatched", decision: "approved", grant_id: null, risk: { level: "high" } });
    expect(outcome.risk.reasons[0]).toMatchObject({ rule: "host_path.rollback", message: "restores host path /srv/app (label app) to snapshot snap-1: everything written there since is replaced" });
    const job = await jobOf(d, actionId);
    expect(job.payload.operation).toBe("rollback");
    expect(job.payload.arguments).toEqual({ label: "app", snapshot_id: "snap-1" });
    expect(job.payload.sandbox.mounts).toEqual([{ label: "app", path: "/srv/app", mode: "rw" }]);
    const types = (await entriesOf(d, actionId)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["decision/1", "approval/1", "lease/1", "dispatch/1"]));
  });

  it.each([
    ["a snapshot the host never reported", "app", "snap-9"],
    ["a snapshot of another label", "data", "snap-1"],
  ])("hostile: rollback to %s is NOT_FOUND at the hub, before anything is held", async (_what, label, snapshot) => {
    const d = db().handle.db;
    const host = await hostWith(d, HOST_PATHS, [SNAPSHOT]);
    const refused = await rejectionOf(submit(testDeps(db().handle), await insertToken(d), "rollback", { host: host.name, label, snapshot_id: snapshot }));
    expect(refused.code).toBe("NOT_FOUND");
    expect(refused.details).toMatchObject({ field: "snapshot_id", label, snapshot_id: snapshot });
  });
});
