/**
 * Host paths end to end through a real guest process: a real hub on the
 * suite's PostgreSQL, a guest enrolled with a ceiling that lists a log label
 * (the host's own /var/log, read-only) and an app label (read-write), and
 * hub-signed jobs queued for it — the guest verifies each, binds the labels,
 * snapshots before the write, seals evidence, and rolls back on a signed
 * rollback job. Hostile: an unlisted label, rw on the ro label, a link to
 * /etc/shadow planted by the workload, a FIFO planted by the workload for
 * the next snapshot to hang on, a tree the workload grew past its budget.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, type DatabaseHandle } from "../../server/db";
import { evidence } from "../../server/db/schema";
import { loadOrCreateJobKey } from "../../server/dispatch";
import { readJobOutput } from "../../server/jobs";
import { probeIdmappedMount } from "../../native/index";
import { openDirNoFollow, walkTree } from "../../agent-guest/snapshots/index";
import { createScratchPostgresDatabase, testPostgresUrl } from "../support/databases";
import { startHub, tempDir, type RunningHub } from "../support/hub-process";
import { actionRow, enrolCode, queueRawJob, startGuest, unmountLeftovers, waitFor, waitForHost, writeCeiling, type RunningGuest } from "./support";

const OWNER = 4321;
/** A world-readable regular file directly in the host's /var/log (one is made, and removed after, when there is none). */
function hostLog(): { name: string; made: boolean } {
  for (const name of fs.readdirSync("/var/log").sort()) {
    const st = fs.lstatSync(path.join("/var/log", name));
    if (st.isFile() && (st.mode & 0o004) !== 0 && st.size > 0) return { name, made: false };
  }
  const name = `leasehold-host-paths-test-${process.pid}.log`;
  fs.writeFileSync(path.join("/var/log", name), "a line the test wrote\n", { mode: 0o644 });
  return { name, made: true };
}

describe("host paths through a real guest [postgres]", () => {
  if (!testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server");
    });
    return;
  }
  let hub: RunningHub;
  let drop: () => Promise<void>;
  let handle: DatabaseHandle;
  let guest: RunningGuest;
  let dir: string;
  let app: string;
  let target: { id: string; name: string };
  const idmap = probeIdmappedMount("/tmp");
  const idmapSkip = idmap.ok ? "" : ` (skipped: idmapped mounts probed absent here: ${idmap.reason})`;

  const digestOf = (where: string) => {
    const fd = openDirNoFollow(where);
    try {
      return walkTree(fd, { max_bytes: 1 << 20, max_inodes: 100 }).digest;
    } finally {
      fs.closeSync(fd);
    }
  };
  const finished = (actionId: string) =>
    waitFor("the job's end", async () => {
      const r = await actionRow(handle.db, actionId);
      return r?.state === "failed" || r?.state === "completed" ? r : undefined;
    }, 60_000);
  const completion = (row: { result: unknown }) => (row.result as { completion: { error?: { code: string; message: string } | null; structured?: Record<string, unknown> } }).completion;
  const envelopeOf = async (actionId: string) => {
    const [stored] = await handle.db.select().from(evidence).where(eq(evidence.actionId, actionId));
    return stored!.envelope as { mounts?: Array<Record<string, unknown>> };
  };

  beforeAll(async () => {
    const scratch = await createScratchPostgresDatabase();
    drop = scratch.drop;
    const env = { DATABASE_URL: scratch.url };
    hub = await startHub(env);
    handle = await openPostgres(scratch.url, { max: 4 });
    dir = tempDir("lh-hostpaths-");
    app = path.join(dir, "app");
    fs.mkdirSync(app, { mode: 0o755 });
    fs.writeFileSync(path.join(app, "index.html"), "<h1>v1</h1>\n", { mode: 0o644 });
    fs.chownSync(app, OWNER, OWNER);
    fs.chownSync(path.join(app, "index.html"), OWNER, OWNER);
    const ceiling = writeCeiling(dir, path.join(dir, "ws"), {
      host_paths: [
        { label: "logs", path: "/var/log", mode: "ro" },
        { label: "app", path: app, mode: "rw", max_bytes: 1 << 20, max_inodes: 100 },
      ],
    });
    guest = startGuest({ hub: hub.url, stateDir: path.join(dir, "state"), ceiling, code: await enrolCode(env, "paths") });
    try {
      const host = await waitForHost(handle.db, "paths");
      target = { id: host.id, name: "paths" };
    } catch (error) {
      throw new Error(`${String(error)}\nhub:\n${hub.output()}\nguest:\n${guest.output()}`, { cause: error });
    }
  }, 180_000);

  afterAll(async () => {
    await guest?.kill();
    await hub?.stop();
    await handle?.close();
    await drop?.();
    expect(unmountLeftovers([dir, hub?.dataDir].filter((d): d is string => d !== undefined))).toEqual([]);
  }, 60_000);

  it("reads a file of the host's /var/log through /host/logs, byte for byte; the evidence lists the mount", async () => {
    const log = hostLog();
    try {
      const key = loadOrCreateJobKey(hub.dataDir);
      const { actionId, jobId } = await queueRawJob(handle.db, key, target, { command: `head -c 200 /host/logs/${log.name} | sha256sum`, mounts: [{ label: "logs", path: "/var/log", mode: "ro" }] });
      const row = await finished(actionId);
      expect(row.state, JSON.stringify(row.result)).toBe("completed");
      const want = createHash("sha256").update(fs.readFileSync(path.join("/var/log", log.name)).subarray(0, 200)).digest("hex");
      expect((await readJobOutput(handle.db, jobId))["stdout"]?.toString()).toContain(want);
      expect((await envelopeOf(actionId)).mounts).toEqual([{ label: "logs", path: "/var/log", mode: "ro" }]);
    } finally {
      if (log.made) fs.rmSync(path.join("/var/log", log.name), { force: true });
    }
  });

  it("refuses an unlisted label and rw on the ro label with POLICY_REFUSED naming it", async () => {
    const key = loadOrCreateJobKey(hub.dataDir);
    const unlisted = await queueRawJob(handle.db, key, target, { command: "cat /host/etc/shadow", mounts: [{ label: "etc", path: "/etc", mode: "ro" }] });
    const rwOnRo = await queueRawJob(handle.db, key, target, { command: "touch /host/logs/x", mounts: [{ label: "logs", path: "/var/log", mode: "rw" }] });
    const a = completion(await finished(unlisted.actionId)).error;
    const b = completion(await finished(rwOnRo.actionId)).error;
    expect(`${a?.code}: ${a?.message}`).toMatch(/^POLICY_REFUSED: .*etc is not a host path label/);
    expect(`${b?.code}: ${b?.message}`).toMatch(/^POLICY_REFUSED: .*logs asks for rw/);
    expect(fs.existsSync("/var/log/x")).toBe(false);
  });

  it.skipIf(!idmap.ok)(`writes under the rw label after a snapshot, plants a link to /etc/shadow, and a signed rollback restores the tree byte-identically without following it${idmapSkip}`, async () => {
    const key = loadOrCreateJobKey(hub.dataDir);
    const original = digestOf(app);
    const shadow = fs.statSync("/etc/shadow");
    const rw = [{ label: "app", path: app, mode: "rw" as const }];
    const edit = await queueRawJob(handle.db, key, target, { command: "echo '<h1>v2</h1>' > /host/app/index.html && ln -s /etc/shadow /host/app/shadow", mounts: rw });
    const row = await finished(edit.actionId);
    expect(row.state, JSON.stringify(row.result)).toBe("completed");
    expect(fs.readFileSync(path.join(app, "index.html"), "utf8")).toBe("<h1>v2</h1>\n");
    expect(fs.lstatSync(path.join(app, "index.html")).uid).toBe(OWNER);
    const mount = (await envelopeOf(edit.actionId)).mounts?.[0];
    expect(mount).toMatchObject({ label: "app", mode: "rw", tree_before: original, tree_after: digestOf(app) });

    const rollback = await queueRawJob(handle.db, key, target, {
      command: "",
      mounts: rw,
      operation: { capability: "workspace", name: "rollback", arguments: { host: "paths", label: "app", snapshot_id: mount?.["snapshot_id"] } },
    });
    const done = await finished(rollback.actionId);
    expect(done.state, JSON.stringify(done.result)).toBe("completed");
    expect(digestOf(app)).toBe(original);
    expect(fs.existsSync(path.join(app, "shadow"))).toBe(false);
    expect(fs.readFileSync(path.join(app, "index.html"), "utf8")).toBe("<h1>v1</h1>\n");
    const after = fs.statSync("/etc/shadow");
    expect([after.ino, after.mode, after.uid, after.mtimeMs]).toEqual([shadow.ino, shadow.mode, shadow.uid, shadow.mtimeMs]);
    expect((await envelopeOf(rollback.actionId)).mounts?.[0]).toMatchObject({ label: "app", tree_after: original });
    // The tree the restore swapped out (holding the link to /etc/shadow) is removed once the guest has delivered the result.
    const swappedOut = () => fs.readdirSync(path.dirname(app)).filter((name) => name.startsWith(`.${path.basename(app)}.leasehold-restore-`));
    await waitFor("the swapped-out tree removed after delivery", async () => swappedOut().length === 0);
    expect(fs.statSync("/etc/shadow").ino).toBe(shadow.ino);
  });

  it.skipIf(!idmap.ok)(`hostile: a FIFO planted in the rw tree (by another user of the host) is recorded by the next job's snapshot without being opened (the job runs), and a rollback removes it${idmapSkip}`, async () => {
    const key = loadOrCreateJobKey(hub.dataDir);
    const rw = [{ label: "app", path: app, mode: "rw" as const }];
    const first = await queueRawJob(handle.db, key, target, { command: "true", mounts: rw });
    expect((await finished(first.actionId)).state).toBe("completed");
    const before = (await envelopeOf(first.actionId)).mounts?.[0];
    const trap = path.join(app, "trap");
    execFileSync("mkfifo", ["-m", "0666", trap]);
    fs.chownSync(trap, OWNER, OWNER);
    // A reader of the FIFO would block for ever: the next snapshot must only record it.
    const next = await queueRawJob(handle.db, key, target, { command: "ls -l /host/app/trap", mounts: rw });
    const ran = await finished(next.actionId);
    expect(ran.state, JSON.stringify(ran.result)).toBe("completed");
    expect((await envelopeOf(next.actionId)).mounts?.[0]?.["tree_before"]).toBe(digestOf(app));
    const rollback = await queueRawJob(handle.db, key, target, {
      command: "",
      mounts: rw,
      operation: { capability: "workspace", name: "rollback", arguments: { host: "paths", label: "app", snapshot_id: before?.["snapshot_id"] } },
    });
    const done = await finished(rollback.actionId);
    expect(done.state, JSON.stringify(done.result)).toBe("completed");
    expect(fs.existsSync(trap)).toBe(false);
    expect(digestOf(app)).toBe(before?.["tree_before"]);
    expect(completion(done).structured).toMatchObject({ identical: true, atomic: true });
  });

  it.skipIf(!idmap.ok)(`hostile: a tree the workload grew past the label's budget refuses the next rw job before it runs (POLICY_REFUSED, nothing snapshotted)${idmapSkip}`, async () => {
    const key = loadOrCreateJobKey(hub.dataDir);
    const rw = [{ label: "app", path: app, mode: "rw" as const }];
    const grow = await queueRawJob(handle.db, key, target, { command: "head -c 2000000 /dev/zero > /host/app/big", mounts: rw });
    const grown = await finished(grow.actionId);
    expect(grown.state, JSON.stringify(grown.result)).toBe("completed");
    const snapshotsBefore = fs.readdirSync(path.join(dir, "state", "snapshots")).length;
    try {
      const next = await queueRawJob(handle.db, key, target, { command: "touch /host/app/ran", mounts: rw });
      const refused = completion(await finished(next.actionId)).error;
      expect(`${refused?.code}: ${refused?.message}`).toMatch(/^POLICY_REFUSED: .*more than 1048576 bytes \(its budget\)/);
      expect(fs.existsSync(path.join(app, "ran"))).toBe(false);
      expect(fs.readdirSync(path.join(dir, "state", "snapshots")).length).toBe(snapshotsBefore);
    } finally {
      fs.rmSync(path.join(app, "big"), { force: true });
    }
  });
});
