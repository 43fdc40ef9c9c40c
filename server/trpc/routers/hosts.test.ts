import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../../test/support/databases";
import { hostEnrolmentCodes, hosts, ledgerEntries } from "../../db/schema";
import { storeHealthReport } from "../../hosts";
import { decodeEntry } from "../../ledger/entry";
import { acquireLease, listActiveLeases } from "../../leases";
import { adminCaller, refusal } from "./test-callers";

const CEILING = { workspace_max_bytes: 1 << 30, memory_bytes: 512 << 20, cpus: 1, pids: 64, timeout_ms: 60_000, output_bytes: 1 << 20, exec_dirs: 2, egress_rules: 0 };

function report(options: { ceiling?: object; tier?: string; bpf?: object } = {}) {
  return {
    tier: options.tier ?? "C",
    kernel_features: ["landlock", "seccomp", "user_namespaces", "mount_namespaces", "pid_namespaces", "network_namespaces", "no_new_privs", "cgroup_memory", "cgroup_pids", "cgroup_cpu"],
    probe: { ...(options.ceiling === undefined ? {} : { ceiling: options.ceiling }), ...(options.bpf === undefined ? {} : { bpf: options.bpf }) },
    workers: [{ capability: "shell", capability_api: 1, worker_abi: 1, version: "1.0.0", digest: `sha256:${"a".repeat(64)}`, self_test: "pass" }],
    witness: { size: 0, failure: null },
    accepting_jobs: true,
    guest_version: "test-guest",
  };
}

async function enrolledHost(db: Parameters<typeof storeHealthReport>[0], name: string, body: object) {
  const [row] = await db.insert(hosts).values({ name, publicKey: "test-key" }).returning();
  if (row === undefined) throw new Error("no host row");
  await storeHealthReport(db, { id: row.id, name, publicKeyPem: "test-key" }, body);
  return row;
}

describeEachDatabase("hosts router", (database) => {
  it("list: the host's kernel tier with the BPF object digest and the loader's detail; a guest without them shows none", async () => {
    const { handle } = database();
    const sha = "0f".repeat(32);
    await enrolledHost(handle.db, "tier-b", report({ tier: "B", bpf: { tier: "B", object_sha256: sha, detail: "tier A refused: LSM program load EPERM; tier B self-test passed" } }));
    await enrolledHost(handle.db, "tier-odd", report({ bpf: { tier: "C", object_sha256: "not-a-digest", detail: "x" } }));
    const { caller } = await adminCaller(handle, "approver");
    const listed = await caller.hosts.list();
    expect(listed.find((h) => h.name === "tier-b")).toMatchObject({ tier: "B", bpf: { object_sha256: sha, detail: expect.stringContaining("tier B self-test passed") } });
    expect(listed.find((h) => h.name === "tier-odd")).toMatchObject({ bpf: null });
  });

  it("list: a reporting host is online with its tier, per-capability readiness, ceiling summary and active lease (approvers see it)", async () => {
    const { handle } = database();
    const host = await enrolledHost(handle.db, "alpha", report({ ceiling: CEILING }));
    await enrolledHost(handle.db, "beta", report());
    const { admin } = await adminCaller(handle, "owner");
    await acquireLease(handle.db, { hostId: host.id, mode: "exclusive", holder: { ownerKind: "admin", ownerId: admin.id, sessionId: null, description: "console of test" } });
    const { caller } = await adminCaller(handle, "approver");
    const listed = await caller.hosts.list();
    const alpha = listed.find((h) => h.name === "alpha");
    expect(alpha).toMatchObject({ online: true, tier: "C", guest_version: "test-guest", ceiling: CEILING });
    // The shell worker reported a passing self-test with matching versions; code reported no worker.
    expect(alpha?.capabilities.find((c) => c.id === "shell")?.state).toBe("ready");
    expect(alpha?.capabilities.find((c) => c.id === "code")?.state).toBe("declared");
    expect(alpha?.leases.map((l) => [l.mode, l.holder])).toEqual([["exclusive", "console of test"]]);
    // A guest that sends no ceiling summary (an older guest) shows none rather than a made-up one.
    expect(listed.find((h) => h.name === "beta")).toMatchObject({ ceiling: null, leases: [] });
  });

  it("breakLease: the owner ends a lease, sealed as lease/1 revoked; an approver may not", async () => {
    const { handle } = database();
    const host = await enrolledHost(handle.db, "gamma", report());
    const { admin, caller } = await adminCaller(handle, "owner");
    const { lease } = await acquireLease(handle.db, { hostId: host.id, mode: "exclusive", holder: { ownerKind: "admin", ownerId: admin.id, sessionId: null, description: "held" } });
    const approver = await adminCaller(handle, "approver");
    expect((await refusal(approver.caller.hosts.breakLease({ leaseId: lease.id }))).code).toBe("FORBIDDEN");
    expect((await listActiveLeases(handle.db)).some((l) => l.id === lease.id)).toBe(true);
    expect(await caller.hosts.breakLease({ leaseId: lease.id })).toEqual({ id: lease.id, mode: "exclusive" });
    expect((await listActiveLeases(handle.db)).some((l) => l.id === lease.id)).toBe(false);
    const rows = await handle.db.select({ body: ledgerEntries.body }).from(ledgerEntries);
    const revoked = rows.map((r) => decodeEntry(r.body)).filter((d) => d.ok && d.entry.type === "lease/1" && (d.entry.data as { event?: string; lease_id?: string }).event === "revoked");
    expect(revoked.length).toBeGreaterThan(0);
    expect((await refusal(caller.hosts.breakLease({ leaseId: lease.id }))).code).toBe("NOT_FOUND");
  });

  it("enrolCode: needs re-authentication; returns the code once with a command that feeds it on stdin, never as an argument; only its SHA-256 is stored", async () => {
    const { handle } = database();
    const stale = await adminCaller(handle, "owner", { stale: true });
    const refused = await refusal(stale.caller.hosts.enrolCode({ name: "delta", ttlMinutes: 15 }));
    expect([refused.code, refused.hint]).toEqual(["FORBIDDEN", "reauthenticate"]);
    expect(await handle.db.select().from(hostEnrolmentCodes).where(eq(hostEnrolmentCodes.name, "delta"))).toEqual([]);

    const { caller } = await adminCaller(handle, "owner");
    const minted = await caller.hosts.enrolCode({ name: "delta", ttlMinutes: 15 });
    expect(minted.code).toMatch(/^lhe_[a-z2-7]{32}$/);
    const [feed, guest] = minted.command.split(" | ");
    expect(feed).toBe(`printf '%s\\n' '${minted.code}'`);
    // The guest's own argv (what every local user reads in /proc) does not hold the code.
    expect(guest).toBe("leasehold-guest enrol --hub http://localhost:8700");
    expect(minted.note).toMatch(/only from this machine/);
    const [stored] = await handle.db.select().from(hostEnrolmentCodes).where(eq(hostEnrolmentCodes.name, "delta"));
    expect(stored?.codeHash).toBe(createHash("sha256").update(minted.code).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(minted.code);
  });

  it("capabilities: every declared manifest with its activation; the opt-in egress-shell is listed as not enabled", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "approver");
    const caps = await caller.hosts.capabilities();
    expect(caps.map((c) => c.id)).toEqual(expect.arrayContaining(["shell", "code", "workspace", "host", "egress-shell"]));
    expect(caps.find((c) => c.id === "egress-shell")).toMatchObject({ activation: "opt-in", status: "not_enabled", active: false });
    expect(caps.find((c) => c.id === "shell")).toMatchObject({ activation: "required", status: "active" });
  });
});
