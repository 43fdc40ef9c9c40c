import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeIdmappedMount } from "../../native/index";
import { verifyEvidence, type EvidenceEnvelope } from "../../server/trust/evidence/index";
import { createHash, createPublicKey } from "node:crypto";
import { testShellPolicy, testVerifiedJob } from "../../test/support/shell-policy";
import { testRunnerContext } from "../../test/support/runner-context";
import { parseCeiling } from "../ceiling/index";
import { listSnapshots, openDirNoFollow, readManifest, storedBlobs, walkTree } from "../snapshots/index";
import { prepareMounts, takeBaselines } from "./host-paths-run";
import { runJob, type RunnerContext } from "./runner";
import type { VerifiedJob } from "./verify-job";

/**
 * Host paths through the runner: the signed policy's labels against the
 * ceiling, the bind at /host/<label>, the snapshot before an rw job, the
 * evidence's mounts, a rollback back to the snapshot and HOST_BUSY for a
 * second writer of the same label.
 */

// Under the native tests' root: a directory the lease uid can traverse (not a 0700 mkdtemp in /tmp).
const ROOT = process.env["LEASEHOLD_NATIVE_TEST_ROOT"] ?? "/tmp/leasehold-native-test";
let ctx: RunnerContext;
const OWNER = 4321;

fs.mkdirSync(ROOT, { recursive: true, mode: 0o755 });
const idmap = probeIdmappedMount(ROOT);
const idmapSkip = idmap.ok ? "" : ` (skipped: idmapped mounts probed absent here: ${idmap.reason})`;
// Named at collection time: the refusal table below spells these paths.
const base = fs.mkdtempSync(path.join(ROOT, "runner-hp-"));
const logs = path.join(base, "log");
const app = path.join(base, "app");

beforeAll(() => {
  fs.chmodSync(base, 0o755);
  const ws = path.join(base, "ws");
  for (const d of [ws, logs, app]) fs.mkdirSync(d, { mode: 0o755 });
  fs.writeFileSync(path.join(logs, "nginx.log"), "GET / 200\n", { mode: 0o644 });
  fs.writeFileSync(path.join(app, "index.html"), "<h1>v1</h1>\n", { mode: 0o644 });
  fs.chownSync(app, OWNER, OWNER);
  fs.chownSync(path.join(app, "index.html"), OWNER, OWNER);
  const stateDir = path.join(base, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  ctx = testRunnerContext(ws, { snapshotsDir: path.join(stateDir, "snapshots") });
  ctx.ceiling = parseCeiling({
    ...ctx.ceiling,
    host_paths: [
      { label: "logs", path: logs, mode: "ro" },
      { label: "app", path: app, mode: "rw", max_bytes: 1 << 20, max_inodes: 100 },
      { label: "tiny", path: app, mode: "rw", max_bytes: 4, max_inodes: 100 },
    ],
  });
});
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

function shellJob(command: string, mounts: Array<{ label: string; path: string; mode: "ro" | "rw" }>, id = "j"): VerifiedJob {
  return testVerifiedJob({ job_id: id, mutating: true, arguments: { host: "local", command, env: {}, stdin: "" }, policy: { ...testShellPolicy(), mounts } });
}

const envelopeOf = (outcome: Awaited<ReturnType<typeof runJob>>): EvidenceEnvelope => {
  const v = verifyEvidence(outcome.evidence, createPublicKey(ctx.hostKey));
  if (!v.ok) throw new Error(`evidence does not verify: ${JSON.stringify(v)}`);
  return outcome.evidence.envelope;
};
const digestOf = (dir: string) => {
  const fd = openDirNoFollow(dir);
  try {
    return walkTree(fd, { max_bytes: 1 << 20, max_inodes: 100 }).digest;
  } finally {
    fs.closeSync(fd);
  }
};

describe("host paths: baselines at guest start", () => {
  it("each rw label with no snapshot of its path gets a baseline (over budget: reported, none kept; ro labels none); a second start keeps it; the snapshot before a job then names the same blobs and stores none", () => {
    const store = path.join(base, "state", "baseline-store");
    const first = takeBaselines(ctx.ceiling, store);
    expect(first.map((b) => b.label)).toEqual(["app", "tiny"]);
    const taken = first[0] as { label: string; taken: string };
    expect(taken.taken).toMatch(/^s/);
    expect(first[1]).toMatchObject({ label: "tiny", failed: expect.stringMatching(/more than 4 bytes/) });
    expect(listSnapshots(store).map((s) => `${s.label}:${s.id}`)).toEqual([`app:${taken.taken}`]);
    expect(readManifest(store, taken.taken).tree_digest).toBe(digestOf(app));

    expect(takeBaselines(ctx.ceiling, store)).toEqual([{ label: "app", kept: taken.taken }, first[1]]);
    expect(listSnapshots(store)).toHaveLength(1);

    const job = testVerifiedJob({ job_id: "after-baseline", mutating: true, arguments: { host: "local", path: "app:index.html" }, policy: { ...testShellPolicy(), mounts: [{ label: "app", path: app, mode: "rw" }] } });
    const prepared = prepareMounts(job, { ceiling: ctx.ceiling, snapshotsDir: store }, { bind: false });
    prepared.release();
    const before = listSnapshots(store).find((s) => s.id !== taken.taken);
    expect(before).toBeDefined();
    // Both name the same blobs, and the snapshot before the job stored none.
    const blobsOf = (id: string) => readManifest(store, id).entries.flatMap((e) => (e.sha256 === undefined ? [] : [e.sha256]));
    expect(blobsOf(before?.id as string)).toEqual(blobsOf(taken.taken));
    expect(blobsOf(taken.taken).length).toBeGreaterThan(0);
    expect(storedBlobs(store)).toEqual([...new Set(blobsOf(taken.taken))].sort());
  });
});

describe("runner: host paths", () => {
  it("reads a host log through an ro label; the evidence lists the mount without digests", async () => {
    const outcome = await runJob(shellJob("cat /host/logs/nginx.log", [{ label: "logs", path: logs, mode: "ro" }]), ctx);
    expect(outcome.error).toBeNull();
    expect(outcome.streams.stdout.toString()).toBe("GET / 200\n");
    expect(envelopeOf(outcome).mounts).toEqual([{ label: "logs", path: logs, mode: "ro" }]);
  });

  it.each<[string, Array<{ label: string; path: string; mode: "ro" | "rw" }>, RegExp]>([
    ["an unlisted label", [{ label: "etc", path: "/etc", mode: "ro" }], /etc is not a host path label/],
    ["rw on an ro label", [{ label: "logs", path: logs, mode: "rw" }], /logs asks for rw/],
    ["a path other than the ceiling's", [{ label: "logs", path: "/var/log", mode: "ro" }], /the host ceiling's logs is/],
  ])("refuses %s with POLICY_REFUSED before anything runs", async (_why, mounts, message) => {
    let launched = false;
    const outcome = await runJob(shellJob("echo RAN", mounts), ctx, { onLaunch: () => (launched = true) });
    expect(outcome.kind).toBe("refused");
    expect(`${outcome.error?.code}: ${outcome.error?.message}`).toMatch(new RegExp(`^POLICY_REFUSED: .*${message.source}`));
    expect(launched).toBe(false);
  });

  it.skipIf(!idmap.ok)(`a label over its budget is refused before anything runs, and no snapshot is kept${idmapSkip}`, async () => {
    let launched = false;
    const before = listSnapshots(ctx.snapshotsDir as string).length;
    const outcome = await runJob(shellJob("echo RAN > /host/tiny/x", [{ label: "tiny", path: app, mode: "rw" }]), ctx, { onLaunch: () => (launched = true) });
    expect(outcome.error?.code).toBe("POLICY_REFUSED");
    expect(outcome.error?.message).toMatch(/more than 4 bytes/);
    expect(launched).toBe(false);
    expect(listSnapshots(ctx.snapshotsDir as string).length).toBe(before);
    expect(fs.existsSync(path.join(app, "x"))).toBe(false);
  });

  it.skipIf(!idmap.ok)(`writes under an rw label change the host file as its owner; the snapshot taken first is rolled back byte-identically${idmapSkip}`, async () => {
    const original = digestOf(app);
    const rw = [{ label: "app", path: app, mode: "rw" as const }];
    const outcome = await runJob(shellJob("echo '<h1>v2</h1>' > /host/app/index.html && echo new > /host/app/added.txt && ln -s /etc/shadow /host/app/shadow", rw), ctx);
    expect(outcome.error).toBeNull();
    expect(fs.readFileSync(path.join(app, "index.html"), "utf8")).toBe("<h1>v2</h1>\n");
    expect(fs.statSync(path.join(app, "added.txt")).uid).toBe(OWNER);
    const mount = envelopeOf(outcome).mounts?.[0];
    expect(mount).toMatchObject({ label: "app", mode: "rw", tree_before: original, snapshot_id: expect.stringMatching(/^s/) });
    expect(mount?.tree_after).toBe(digestOf(app));
    expect(mount?.tree_after).not.toBe(original);
    expect(listSnapshots(ctx.snapshotsDir as string).map((s) => s.id)).toContain(mount?.snapshot_id);

    const rollback = await runJob(
      testVerifiedJob({ job_id: "rb", capability: { id: "workspace", version: "1.0.0" }, operation: "rollback", mutating: true, arguments: { label: "app", snapshot_id: mount?.snapshot_id }, policy: { ...testShellPolicy(), mounts: rw } }),
      ctx,
    );
    expect(rollback.error).toBeNull();
    expect(rollback.structured).toMatchObject({ label: "app", tree_digest: original, snapshot_tree_digest: original, identical: true, not_restored: [] });
    expect(digestOf(app)).toBe(original);
    expect(fs.existsSync(path.join(app, "shadow"))).toBe(false);
    expect(fs.readFileSync(path.join(app, "index.html"), "utf8")).toBe("<h1>v1</h1>\n");
    expect(envelopeOf(rollback).mounts).toEqual([{ label: "app", path: app, mode: "rw", tree_before: mount?.tree_after, tree_after: original, snapshot_id: rollback.structured?.["undo_snapshot_id"] }]);
    // The tree swapped out (with the workload's link to /etc/shadow) waits, root's alone, until the result is delivered.
    const swappedOut = () => fs.readdirSync(path.dirname(app)).filter((name) => name.startsWith(`.${path.basename(app)}.leasehold-restore-`));
    expect(swappedOut()).toHaveLength(1);
    expect(fs.lstatSync(path.join(path.dirname(app), swappedOut()[0] as string))).toMatchObject({ uid: 0, mode: fs.constants.S_IFDIR | 0o700 });
    const shadow = fs.statSync("/etc/shadow");
    rollback.afterDelivery?.();
    expect(swappedOut()).toEqual([]);
    expect(fs.statSync("/etc/shadow")).toMatchObject({ ino: shadow.ino, mode: shadow.mode, size: shadow.size });
    expect(digestOf(app)).toBe(original);
  });

  it.skipIf(!idmap.ok)(`a second concurrent job on the same rw label gets HOST_BUSY on the guest; an ro job beside it runs${idmapSkip}`, async () => {
    const rw = [{ label: "app", path: app, mode: "rw" as const }];
    const first = runJob(shellJob("sleep 1", rw, "first"), ctx);
    const second = await runJob(shellJob("echo RAN", rw, "second"), ctx);
    const reader = await runJob(shellJob("cat /host/logs/nginx.log", [{ label: "logs", path: logs, mode: "ro" }], "reader"), ctx);
    expect(second.error?.code).toBe("HOST_BUSY");
    expect(second.error?.message).toMatch(/app/);
    expect(reader.error).toBeNull();
    expect((await first).error).toBeNull();
    expect((await runJob(shellJob("true", rw, "third"), ctx)).error).toBeNull();
  });

  it("rollback of a snapshot this guest does not hold is NOT_FOUND; of a label the policy does not give rw, POLICY_REFUSED", async () => {
    const rb = (args: Record<string, unknown>, mounts: Array<{ label: string; path: string; mode: "ro" | "rw" }>) =>
      runJob(testVerifiedJob({ capability: { id: "workspace", version: "1.0.0" }, operation: "rollback", mutating: true, arguments: args, policy: { ...testShellPolicy(), mounts } }), ctx);
    expect((await rb({ label: "app", snapshot_id: "s0-00000000" }, [{ label: "app", path: app, mode: "rw" }])).error?.code).toBe("NOT_FOUND");
    expect((await rb({ label: "app", snapshot_id: "s0-00000000" }, [{ label: "app", path: app, mode: "ro" }])).error?.code).toBe("POLICY_REFUSED");
    expect((await rb({ label: "app", snapshot_id: "../../etc" }, [{ label: "app", path: app, mode: "rw" }])).error?.code).toBe("INVALID_ARGUMENT");
  });

  const fsJob = (operation: string, args: Record<string, unknown>, mounts: Array<{ label: string; path: string; mode: "ro" | "rw" }>) =>
    testVerifiedJob({ capability: { id: "workspace", version: "1.0.0" }, operation, mutating: operation === "fs_write", arguments: { host: "local", ...args }, policy: { ...testShellPolicy(), mounts } });

  it("fs_read and fs_list take label:path under the signed policy's mounts, and refuse escapes and ungranted labels", async () => {
    const ro = [{ label: "logs", path: logs, mode: "ro" as const }];
    const read = await runJob(fsJob("fs_read", { path: "logs:nginx.log" }, ro), ctx);
    expect(read.error).toBeNull();
    expect(read.streams.stdout.toString()).toBe("GET / 200\n");
    expect(envelopeOf(read).mounts).toEqual([{ label: "logs", path: logs, mode: "ro" }]);
    const list = await runJob(fsJob("fs_list", { path: "logs:" }, ro), ctx);
    expect(JSON.parse(list.streams.stdout.toString()).map((e: { name: string }) => e.name)).toEqual(["nginx.log"]);
    expect((await runJob(fsJob("fs_read", { path: "logs:../app/index.html" }, ro), ctx)).error?.message).toMatch(/\.\./);
    expect((await runJob(fsJob("fs_read", { path: "app:index.html" }, ro), ctx)).error?.code).toBe("POLICY_REFUSED");
    expect((await runJob(fsJob("fs_write", { path: "logs:x", content: "x" }, ro), ctx)).error?.code).toBe("POLICY_REFUSED");
    expect(fs.existsSync(path.join(logs, "x"))).toBe(false);
  });

  it("fs_write to an rw label snapshots the tree first and records both digests; the digest after stores the written bytes as a blob", async () => {
    const before = digestOf(app);
    const outcome = await runJob(fsJob("fs_write", { path: "app:notes/todo.txt", content: "ship it\n" }, [{ label: "app", path: app, mode: "rw" }]), ctx);
    expect(outcome.error).toBeNull();
    expect(fs.readFileSync(path.join(app, "notes", "todo.txt"), "utf8")).toBe("ship it\n");
    const mount = envelopeOf(outcome).mounts?.[0];
    expect(mount).toMatchObject({ label: "app", mode: "rw", tree_before: before, tree_after: digestOf(app) });
    expect(outcome.structured?.["snapshot_id"]).toBe(mount?.snapshot_id);
    // The digest after the job stored what it wrote, so the label's next snapshot will not read it.
    expect(storedBlobs(ctx.snapshotsDir as string)).toContain(createHash("sha256").update("ship it\n").digest("hex"));
  });
});
