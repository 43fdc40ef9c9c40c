import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { createCapabilityRegistry } from "../capabilities";
import { hosts } from "../db/schema";
import { storeHealthReport } from "../hosts";
import { hostReportReadiness } from "./readiness";

/**
 * The pipeline's readiness check from stored guest reports: a capability is
 * ready only when the report says so; a host whose established tier is too
 * weak for the capability's policy (egress-shell on tier C) is marked
 * `unenforceable` — the pipeline answers UNENFORCEABLE there, not
 * CAPABILITY_UNAVAILABLE.
 */
const FEATURES = ["landlock", "seccomp", "user_namespaces", "mount_namespaces", "pid_namespaces", "network_namespaces", "no_new_privs", "cgroup_memory", "cgroup_pids", "cgroup_cpu"];

function report(tier: string | null) {
  return {
    tier,
    kernel_features: FEATURES,
    probe: {},
    workers: ["shell", "egress-shell"].map((capability) => ({ capability, capability_api: 1, worker_abi: 1, version: "1.0.0", digest: `sha256:${"a".repeat(64)}`, self_test: "pass" })),
    witness: { size: 0, failure: null },
    accepting_jobs: true,
    guest_version: "test-guest",
  };
}

describeEachDatabase("readiness from host reports", (database) => {
  it("egress-shell: ready on tier B, unenforceable on tier C, not ready (and not 'unenforceable') without a tier; shell is ready on tier C", async () => {
    const { db } = database().handle;
    const registry = createCapabilityRegistry({ enabled: ["egress-shell"] });
    const net = registry.resolveOperation("run_command_net");
    const shell = registry.resolveOperation("run_command");
    const check = hostReportReadiness(db);
    const hostWith = async (name: string, tier: string | null) => {
      const [row] = await db.insert(hosts).values({ name, publicKey: "test-key" }).returning();
      await storeHealthReport(db, { id: row!.id, name, publicKeyPem: "test-key" }, report(tier));
      return { id: row!.id, name };
    };
    const b = await hostWith("ready-b", "B");
    const c = await hostWith("ready-c", "C");
    const none = await hostWith("ready-none", null);
    expect(await check.check({ manifest: net.manifest, operation: net.operation, host: b })).toEqual({ ready: true });
    const onC = await check.check({ manifest: net.manifest, operation: net.operation, host: c });
    expect(onC).toMatchObject({ ready: false, unenforceable: true, reason: expect.stringContaining("host has tier C") });
    const onNone = await check.check({ manifest: net.manifest, operation: net.operation, host: none });
    expect(onNone).toMatchObject({ ready: false });
    expect(onNone).not.toHaveProperty("unenforceable");
    expect(await check.check({ manifest: shell.manifest, operation: shell.operation, host: c })).toEqual({ ready: true });
  });

  it("judges the health read with the host row when the caller passes it (the pipeline's one read), not a second read", async () => {
    const { db } = database().handle;
    const registry = createCapabilityRegistry({ enabled: ["egress-shell"] });
    const net = registry.resolveOperation("run_command_net");
    const check = hostReportReadiness(db);
    const [row] = await db.insert(hosts).values({ name: "ready-passed", publicKey: "test-key" }).returning();
    await storeHealthReport(db, { id: row!.id, name: "ready-passed", publicKeyPem: "test-key" }, report("B"));
    const [stored] = await db.select({ health: hosts.health }).from(hosts).where(eq(hosts.id, row!.id));
    expect(await check.check({ manifest: net.manifest, operation: net.operation, host: { id: row!.id, name: "ready-passed", health: stored!.health } })).toEqual({ ready: true });
    // What was passed is what counts: no report passed means not ready, whatever the row holds.
    expect(await check.check({ manifest: net.manifest, operation: net.operation, host: { id: row!.id, name: "ready-passed", health: null } })).toMatchObject({ ready: false, reason: expect.stringContaining("has not reported") });
  });
});
