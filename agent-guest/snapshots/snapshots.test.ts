import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LeaseholdError } from "../../server/trust";
import { thrownBy } from "../../test/support/refusals";
import { digestAfterJob, holdLabels, listSnapshots, manifestEntries, migrateStore, pruneSnapshots, readManifest, restoreSnapshot, storedBlobs, sweepPartialSnapshots, takeSnapshot, walkTree, openDirNoFollow } from "./index";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-snapshots-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
const BUDGET = { max_bytes: 64 << 20, max_inodes: 10_000 };
let n = 0;
const fresh = () => {
  const d = path.join(base, `t${n++}`);
  fs.mkdirSync(path.join(d, "store"), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(d, "app"));
  return { store: path.join(d, "store"), app: path.join(d, "app") };
};

/** A small app tree: files with owners and modes, a sub-directory, a relative link, a FIFO. */
function seed(app: string): void {
  fs.writeFileSync(path.join(app, "config.txt"), "version=1\n");
  fs.chmodSync(path.join(app, "config.txt"), 0o640);
  fs.chownSync(path.join(app, "config.txt"), 4321, 4322);
  fs.mkdirSync(path.join(app, "lib"));
  fs.writeFileSync(path.join(app, "lib", "a.js"), "module.exports = 1;\n");
  fs.writeFileSync(path.join(app, "lib", "big.bin"), Buffer.alloc(3 << 20, 7));
  fs.symlinkSync("lib/a.js", path.join(app, "current"));
  execFileSync("mkfifo", [path.join(app, "pipe")]);
}

const blobFile = (store: string, sha: string) => path.join(store, "blobs", sha.slice(0, 2), sha);
const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** The store's invariants: every retained manifest's blobs are stored and hash to their names; with `swept`, no blob is stored that no manifest names. */
function expectConsistent(store: string, swept: boolean): void {
  const named = new Set<string>();
  for (const s of listSnapshots(store)) for (const e of readManifest(store, s.id).entries) if (e.sha256 !== undefined) named.add(e.sha256);
  for (const sha of named) expect(sha256(fs.readFileSync(blobFile(store, sha)))).toBe(sha);
  if (swept) expect(storedBlobs(store)).toEqual([...named].sort());
}

/** Runs `call` (over this folder's index) in a child process: where a test kills the guest mid-step through a seam. */
function runChild(dir: string, name: string, call: string) {
  const script = path.join(dir, name);
  fs.writeFileSync(script, `import { readManifest, restoreSnapshot, takeSnapshot } from ${JSON.stringify(path.resolve(__dirname, "index.ts"))};\nvoid readManifest;\nvoid restoreSnapshot;\nvoid takeSnapshot;\n${call}\n`);
  try {
    return spawnSync(process.execPath, ["--import", "tsx", script], { cwd: path.resolve(__dirname, "../.."), encoding: "utf8", timeout: 60_000 });
  } finally {
    fs.rmSync(script);
  }
}

const digestOf = (dir: string) => {
  const fd = openDirNoFollow(dir);
  try {
    return walkTree(fd, BUDGET).digest;
  } finally {
    fs.closeSync(fd);
  }
};

describe("snapshots", () => {
  it("snapshots a tree (a planted FIFO recorded, never opened) and restores it byte-identically after edits, deletions and additions", () => {
    const { store, app } = fresh();
    seed(app);
    const before = digestOf(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    expect(snap.tree_digest).toBe(before);
    expect(snap.entries.find((e) => e.path === "pipe")).toMatchObject({ type: "fifo" });
    expect(snap.entries.find((e) => e.path === "current")).toMatchObject({ type: "symlink", target: "lib/a.js" });
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    fs.rmSync(path.join(app, "lib"), { recursive: true });
    fs.writeFileSync(path.join(app, "new.txt"), "added\n");
    fs.rmSync(path.join(app, "pipe"));
    expect(digestOf(app)).not.toBe(before);
    const restored = restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET);
    expect(restored).toEqual({ atomic: true, tree_digest: before, identical: true, not_restored: [], checked: { by_stamp: 3, read: 0 } });
    expect(fs.readFileSync(path.join(app, "config.txt"), "utf8")).toBe("version=1\n");
    expect(fs.statSync(path.join(app, "config.txt"))).toMatchObject({ uid: 4321, gid: 4322 });
    expect(fs.lstatSync(path.join(app, "pipe")).isFIFO()).toBe(true);
  });

  it("hostile: a link to /etc/shadow planted in the tree is recorded as a link, never read; on rollback links left by the workload are removed, never followed", () => {
    const { store, app } = fresh();
    seed(app);
    fs.symlinkSync("/etc/shadow", path.join(app, "shadow"));
    const shadowBefore = fs.statSync("/etc/shadow");
    const shadowBytes = fs.readFileSync("/etc/shadow");
    const snap = takeSnapshot(store, "app", app, BUDGET);
    const entry = snap.entries.find((e) => e.path === "shadow");
    expect(entry).toMatchObject({ type: "symlink", target: "/etc/shadow", size: 0 });
    expect(entry?.sha256).toBeUndefined();
    // The workload replaces a directory and a file with links out of the tree.
    fs.rmSync(path.join(app, "lib"), { recursive: true });
    fs.symlinkSync("/etc", path.join(app, "lib"));
    fs.rmSync(path.join(app, "config.txt"));
    fs.symlinkSync("/etc/shadow", path.join(app, "config.txt"));
    const restored = restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET);
    expect(restored.identical).toBe(true);
    expect(fs.lstatSync(path.join(app, "lib")).isDirectory()).toBe(true);
    expect(fs.lstatSync(path.join(app, "config.txt")).isFile()).toBe(true);
    const shadowAfter = fs.statSync("/etc/shadow");
    expect([shadowAfter.ino, shadowAfter.mode, shadowAfter.uid, shadowAfter.mtimeMs]).toEqual([shadowBefore.ino, shadowBefore.mode, shadowBefore.uid, shadowBefore.mtimeMs]);
    expect(fs.readFileSync("/etc/shadow").equals(shadowBytes)).toBe(true);
    expect(fs.readdirSync("/etc").length).toBeGreaterThan(5);
  });

  it.each([
    ["bytes", { max_bytes: 1 << 20, max_inodes: 10_000 }, /more than 1048576 bytes/],
    ["entries", { max_bytes: 64 << 20, max_inodes: 3 }, /more than 3 entries/],
  ])("refuses a tree over its budget (%s) with POLICY_REFUSED and keeps nothing of it", (_what, budget, message) => {
    const { store, app } = fresh();
    seed(app);
    const e = thrownBy(() => takeSnapshot(store, "app", app, budget));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.message).toMatch(message);
    expect(fs.readdirSync(store).filter((name) => name !== "blobs")).toEqual([]);
    expect(storedBlobs(store)).toEqual([]);
  });

  it("a restore that fails half-way leaves the label's tree exactly as it was and no staging directory beside it", () => {
    const { store, app } = fresh();
    seed(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    fs.rmSync(path.join(app, "lib"), { recursive: true });
    fs.writeFileSync(path.join(app, "added.txt"), "new\n");
    const edited = digestOf(app);
    const inodeBefore = fs.statSync(app).ino;
    let made = 0;
    const e = thrownBy(() =>
      restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET, {
        afterEntry: (p) => {
          made += 1;
          // Half of the snapshot's entries made, including the changed file and a directory.
          if (p === "lib/a.js") throw new LeaseholdError("INTERNAL", "injected failure mid-restore");
        },
      }),
    );
    expect(e.message).toBe("injected failure mid-restore");
    expect(made).toBeGreaterThan(2);
    expect(made).toBeLessThan(snap.entries.length - 1);
    expect(digestOf(app)).toBe(edited);
    expect(fs.statSync(app).ino).toBe(inodeBefore);
    expect(fs.readFileSync(path.join(app, "config.txt"), "utf8")).toBe("version=2\n");
    expect(fs.readdirSync(path.dirname(app)).filter((name) => name.includes("leasehold-restore"))).toEqual([]);
    // The next restore completes from the same state.
    expect(restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET)).toMatchObject({ identical: true, atomic: true, tree_digest: snap.tree_digest });
  });

  it("a label that is itself a mount point cannot be swapped from its parent: it is restored in place and says atomic false", () => {
    const { store, app } = fresh();
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "lh-snapshot-test", app]);
    try {
      seed(app);
      const snap = takeSnapshot(store, "app", app, BUDGET);
      fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
      fs.rmSync(path.join(app, "lib"), { recursive: true });
      expect(restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET)).toMatchObject({ atomic: false, identical: true, tree_digest: snap.tree_digest });
      expect(fs.readdirSync(path.dirname(app)).filter((name) => name.includes("leasehold-restore"))).toEqual([]);
    } finally {
      execFileSync("umount", [app]);
    }
  });

  it("hostile: what a killed restore left beside the label (a staging tree holding a link to /etc/shadow) is removed by the next restore without following it", () => {
    const { store, app } = fresh();
    seed(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    const left = path.join(path.dirname(app), ".app.leasehold-restore-0123456789ab");
    fs.mkdirSync(path.join(left, "etc"), { recursive: true, mode: 0o700 });
    fs.symlinkSync("/etc/shadow", path.join(left, "etc", "shadow"));
    fs.symlinkSync("/etc", path.join(left, "sys"));
    const shadow = fs.statSync("/etc/shadow");
    const shadowBytes = fs.readFileSync("/etc/shadow");
    // Another user's directory of the same prefix is not the guest's to remove.
    const foreign = path.join(path.dirname(app), ".app.leasehold-restore-foreign");
    fs.mkdirSync(foreign);
    fs.chownSync(foreign, 1000, 1000);
    expect(restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET).identical).toBe(true);
    expect(fs.existsSync(left)).toBe(false);
    expect(fs.existsSync(foreign)).toBe(true);
    const after = fs.statSync("/etc/shadow");
    expect([after.ino, after.mode, after.uid, after.mtimeMs]).toEqual([shadow.ino, shadow.mode, shadow.uid, shadow.mtimeMs]);
    expect(fs.readFileSync("/etc/shadow").equals(shadowBytes)).toBe(true);
  });

  it("hostile: a FIFO planted in the rw tree while the snapshot walks it is recorded by type and never opened (the snapshot completes)", () => {
    const { store, app } = fresh();
    seed(app);
    fs.mkdirSync(path.join(app, "zz"));
    let planted = false;
    // The walk visits names in byte order: while it copies config.txt, "zz" is not yet read.
    const snap = takeSnapshot(store, "app", app, BUDGET, new Date(), {
      beforeOpen: (p) => {
        if (p !== "config.txt" || planted) return;
        execFileSync("mkfifo", [path.join(app, "zz", "trap")]);
        planted = true;
      },
    });
    expect(planted).toBe(true);
    expect(snap.entries.find((e) => e.path === "zz/trap")).toMatchObject({ type: "fifo", size: 0 });
    expect(snap.entries.find((e) => e.path === "zz/trap")?.sha256).toBeUndefined();
  });

  it("hostile: a file swapped for a FIFO between the walk's lstat and its open is refused as a race, without hanging, and nothing is kept", () => {
    const { store, app } = fresh();
    seed(app);
    const target = path.join(app, "lib", "a.js");
    const e = thrownBy(() =>
      takeSnapshot(store, "app", app, BUDGET, new Date(), {
        beforeOpen: (p) => {
          if (p !== "lib/a.js") return;
          fs.rmSync(target);
          execFileSync("mkfifo", [target]);
        },
      }),
    );
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.message).toMatch(/lib\/a\.js (changed|was replaced) during the walk/);
    expect(fs.readdirSync(store).filter((name) => name !== "blobs")).toEqual([]);
    expect(storedBlobs(store)).toEqual([]);
  });

  it("refuses a label path that is, or passes through, a symlink", () => {
    const { store, app } = fresh();
    seed(app);
    const link = path.join(path.dirname(app), "app-link");
    fs.symlinkSync(app, link);
    expect(thrownBy(() => takeSnapshot(store, "app", link, BUDGET)).message).toMatch(/symlink/);
    expect(thrownBy(() => takeSnapshot(store, "app", path.join(link, "lib"), BUDGET)).message).toMatch(/symlink/);
  });

  it("lists most recent first, and prunes by count per label, age and total bytes, always keeping each label's newest", () => {
    const { store, app } = fresh();
    seed(app);
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    const ids = [0, 1, 2, 3].map((i) => takeSnapshot(store, "app", app, BUDGET, new Date(t0 + i * 60_000)).id);
    expect(listSnapshots(store).map((s) => s.id)).toEqual([...ids].reverse());
    expect(pruneSnapshots(store, { keep_per_label: 3, max_age_s: 1e9, max_bytes: 1e12 }, new Date(t0 + 600_000))).toEqual([ids[0]]);
    expect(pruneSnapshots(store, { keep_per_label: 10, max_age_s: 150, max_bytes: 1e12 }, new Date(t0 + 4 * 60_000))).toEqual([ids[1]]);
    expect(pruneSnapshots(store, { keep_per_label: 10, max_age_s: 1, max_bytes: 1 }, new Date(t0 + 1e9))).toEqual([ids[2]]);
    expect(listSnapshots(store).map((s) => s.id)).toEqual([ids[3]]);
  });

  it("a second holder of a rw label gets HOST_BUSY until the first releases it", () => {
    const release = holdLabels(["app"], "job-1");
    const e = thrownBy(() => holdLabels(["logs2", "app"], "job-2"));
    expect(e.code).toBe("HOST_BUSY");
    expect(e.message).toMatch(/app/);
    // all or none: job-2 did not keep logs2 either
    holdLabels(["logs2"], "job-3")();
    release();
    holdLabels(["app"], "job-2")();
  });

  it("hostile: a file rewritten in place with the same size and its old mtime put back is still seen as changed (ctime) and restored", () => {
    const { store, app } = fresh();
    seed(app);
    const before = digestOf(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    const file = path.join(app, "lib", "a.js");
    const st = fs.statSync(file);
    fs.writeFileSync(file, "module.exports = 2;\n"); // same length
    fs.utimesSync(file, st.atime, st.mtime);
    expect(fs.statSync(file).size).toBe(st.size);
    const restored = restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET);
    expect(restored.identical).toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe("module.exports = 1;\n");
    expect(digestOf(app)).toBe(before);
  });

  it("a later snapshot names the unchanged files' blobs without opening or linking them, and stores only the changed one; each restores its own tree", () => {
    const { store, app } = fresh();
    seed(app);
    const first = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:00:00Z")));
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    const opened: string[] = [];
    const second = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:01:00Z")), { beforeOpen: (p) => opened.push(p) });
    expect(opened).toEqual(["config.txt"]);
    const shaOf = (m: typeof first, p: string) => m.entries.find((e) => e.path === p)?.sha256 as string;
    expect(shaOf(second, "lib/big.bin")).toBe(shaOf(first, "lib/big.bin"));
    // No hard link per unchanged file: the blob is the one file holding those bytes.
    expect(fs.statSync(blobFile(store, shaOf(first, "lib/big.bin"))).nlink).toBe(1);
    expect(storedBlobs(store)).toEqual([...new Set([...first.entries, ...second.entries].flatMap((e) => (e.sha256 ? [e.sha256] : [])))].sort());
    expect(restoreSnapshot(store, readManifest(store, first.id), app, BUDGET).identical).toBe(true);
    expect(fs.readFileSync(path.join(app, "config.txt"), "utf8")).toBe("version=1\n");
    expect(restoreSnapshot(store, readManifest(store, second.id), app, BUDGET).tree_digest).toBe(second.tree_digest);
    expect(fs.readFileSync(path.join(app, "config.txt"), "utf8")).toBe("version=2\n");
  });

  it("the check after a restore reads no file again: each file linked from the live tree is known by the stamp its link gave it, taken before the old tree's removal changes that ctime", () => {
    const { store, app } = fresh();
    seed(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    const bigInode = fs.statSync(path.join(app, "lib", "big.bin")).ino;
    const restored = restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET);
    expect(restored).toMatchObject({ identical: true, atomic: true, checked: { by_stamp: 3, read: 0 } });
    // Linked, not copied: the live file's inode carries on in the restored tree.
    expect(fs.statSync(path.join(app, "lib", "big.bin")).ino).toBe(bigInode);
    expect(digestOf(app)).toBe(snap.tree_digest);
  });

  it("the old tree's removal can wait (deferRemoval): swapped out it is root's, mode 0700, beside the label; removed when called; and a restore whose removal never ran has it swept by the label's next restore", () => {
    const { store, app } = fresh();
    fs.chownSync(app, 1000, 1000);
    fs.chmodSync(app, 0o755);
    seed(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    const staged = () => fs.readdirSync(path.dirname(app)).filter((name) => name.startsWith(".app.leasehold-restore-"));
    let remove: (() => void) | undefined;
    expect(restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET, { deferRemoval: (r) => (remove = r) }).identical).toBe(true);
    expect(digestOf(app)).toBe(snap.tree_digest);
    expect(fs.statSync(app)).toMatchObject({ uid: 1000, gid: 1000 });
    const [old] = staged();
    expect(old).toBeDefined();
    const oldSt = fs.lstatSync(path.join(path.dirname(app), old as string));
    expect([oldSt.uid, oldSt.gid, oldSt.mode & 0o7777]).toEqual([0, 0, 0o700]);
    expect(fs.readFileSync(path.join(path.dirname(app), old as string, "config.txt"), "utf8")).toBe("version=2\n");
    remove?.();
    expect(staged()).toEqual([]);

    // A guest that died before running the removal: the next restore of the label sweeps the old tree.
    fs.writeFileSync(path.join(app, "config.txt"), "version=3\n");
    let never: (() => void) | undefined;
    restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET, { deferRemoval: (r) => (never = r) });
    expect(staged()).toHaveLength(1);
    fs.writeFileSync(path.join(app, "config.txt"), "version=4\n");
    expect(restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET).identical).toBe(true);
    expect(staged()).toEqual([]);
    // Run late, it finds its tree gone and only lets go of its descriptors.
    never?.();
    expect(staged()).toEqual([]);
    expect(digestOf(app)).toBe(snap.tree_digest);
  });

  it("a listing reads each snapshot's small summary.json, not its manifest; a snapshot stored without one is listed from its manifest; a summary naming another id is not listed", () => {
    const { store, app } = fresh();
    seed(app);
    const a = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:00:00Z")));
    const b = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:01:00Z")));
    expect(JSON.parse(fs.readFileSync(path.join(store, b.id, "summary.json"), "utf8"))).toEqual({ id: b.id, label: "app", path: app, created_at: b.created_at, bytes: b.bytes, files: b.files, tree_digest: b.tree_digest, method: b.method });
    // A manifest a listing does not read: made unparseable, the snapshot is still listed from its summary.
    fs.writeFileSync(path.join(store, b.id, "manifest.json"), "{");
    fs.rmSync(path.join(store, a.id, "summary.json"));
    expect(listSnapshots(store).map((s) => s.id)).toEqual([b.id, a.id]);
    fs.writeFileSync(path.join(store, b.id, "summary.json"), JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(store, b.id, "summary.json"), "utf8")), id: a.id }));
    expect(listSnapshots(store).map((s) => s.id)).toEqual([a.id]);
  });

  it("a half-built snapshot a killed guest left is never listed, and the start-up sweep removes it", () => {
    const { store, app } = fresh();
    seed(app);
    const kept = takeSnapshot(store, "app", app, BUDGET);
    fs.mkdirSync(path.join(store, ".tmp-s0-deadbeef", "data"), { recursive: true });
    expect(listSnapshots(store).map((s) => s.id)).toEqual([kept.id]);
    expect(sweepPartialSnapshots(store)).toBe(1);
    expect(fs.readdirSync(store).filter((name) => name !== "blobs")).toEqual([kept.id]);
  });
});

describe("content-addressed store", () => {
  it("stores each content once under blobs/<prefix>/<sha256> (dirs 0700, blobs 0400, no temporaries left); manifests are leasehold.snapshot/2 and name blobs by sha256", () => {
    const { store, app } = fresh();
    seed(app);
    fs.writeFileSync(path.join(app, "copy.js"), "module.exports = 1;\n"); // the same bytes as lib/a.js
    const snap = takeSnapshot(store, "app", app, BUDGET);
    const m = JSON.parse(fs.readFileSync(path.join(store, snap.id, "manifest.json"), "utf8")) as { schema: string; entries: Array<Record<string, unknown>> };
    expect(m.schema).toBe("leasehold.snapshot/2");
    expect(m.entries.some((e) => "data" in e)).toBe(false);
    expect(fs.readdirSync(path.join(store, snap.id)).sort()).toEqual(["manifest.json", "summary.json"]);
    const files = snap.entries.filter((e) => e.type === "file");
    expect(files).toHaveLength(4);
    expect(storedBlobs(store)).toHaveLength(3);
    for (const e of files) {
      const st = fs.statSync(blobFile(store, e.sha256 as string));
      expect([st.mode & 0o7777, st.uid, st.size]).toEqual([0o400, 0, e.size]);
    }
    expect(fs.statSync(path.join(store, "blobs")).mode & 0o7777).toBe(0o700);
    expect(fs.statSync(path.dirname(blobFile(store, files[0]?.sha256 as string))).mode & 0o7777).toBe(0o700);
    expect(fs.readdirSync(path.join(store, "blobs")).filter((n) => n.startsWith("."))).toEqual([]);
    expectConsistent(store, true);
  });

  it("the digest after a job stores what the job changed and records its stamps: the next snapshot opens no file; a host write after that digest is read by the next snapshot (ctime)", () => {
    const { store, app } = fresh();
    seed(app);
    const before = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:00:00Z")));
    // What a job does.
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    fs.writeFileSync(path.join(app, "lib", "new.txt"), "new\n");
    fs.rmSync(path.join(app, "lib", "big.bin"));
    const after = digestAfterJob(store, "app", app, BUDGET, manifestEntries(before));
    expect(after).toBe(digestOf(app));
    expect(fs.existsSync(blobFile(store, sha256("version=2\n")))).toBe(true);
    expect(fs.existsSync(blobFile(store, sha256("new\n")))).toBe(true);
    const opened: string[] = [];
    const next = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:01:00Z")), { beforeOpen: (p) => opened.push(p) });
    expect(opened).toEqual([]);
    expect(next.tree_digest).toBe(after);
    // A host write after the digest: its ctime moves, so its stamp is unknown and it is read.
    const third = digestAfterJob(store, "app", app, BUDGET, manifestEntries(next));
    fs.writeFileSync(path.join(app, "lib", "new.txt"), "NEW\n");
    const reread: string[] = [];
    const last = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:02:00Z")), { beforeOpen: (p) => reread.push(p) });
    expect(third).toBe(after);
    expect(reread).toEqual(["lib/new.txt"]);
    expect(last.tree_digest).toBe(digestOf(app));
    expect(restoreSnapshot(store, readManifest(store, next.id), app, BUDGET)).toMatchObject({ identical: true });
    expect(fs.readFileSync(path.join(app, "lib", "new.txt"), "utf8")).toBe("new\n");
    expectConsistent(store, false);
  });

  it("pruning removes a snapshot's manifest and then every blob no retained manifest names; max_bytes counts a blob shared by snapshots once", () => {
    const { store, app } = fresh();
    seed(app);
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    const a = takeSnapshot(store, "app", app, BUDGET, new Date(t0));
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    const b = takeSnapshot(store, "app", app, BUDGET, new Date(t0 + 60_000));
    // Each holds 3 MiB and a few bytes, almost all of it the same blob: both fit in 4 MiB counted once, not twice.
    expect(a.bytes + b.bytes).toBeGreaterThan(6 << 20);
    expect(pruneSnapshots(store, { keep_per_label: 10, max_age_s: 1e9, max_bytes: 4 << 20 }, new Date(t0 + 120_000))).toEqual([]);
    expectConsistent(store, true);
    expect(pruneSnapshots(store, { keep_per_label: 1, max_age_s: 1e9, max_bytes: 1e12 }, new Date(t0 + 120_000))).toEqual([a.id]);
    expect(fs.existsSync(blobFile(store, sha256("version=1\n")))).toBe(false);
    expect(fs.existsSync(blobFile(store, sha256("version=2\n")))).toBe(true);
    expectConsistent(store, true);
    expect(restoreSnapshot(store, readManifest(store, b.id), app, BUDGET).identical).toBe(true);
  });

  it("hostile: a prune failed after removing a manifest, or half-way through its sweep, leaves every retained manifest's blobs; the next prune leaves no unnamed blob", () => {
    const { store, app } = fresh();
    seed(app);
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      fs.writeFileSync(path.join(app, "config.txt"), `version=${i}\n`);
      fs.writeFileSync(path.join(app, `only-${i}.txt`), `only ${i}\n`);
      ids.push(takeSnapshot(store, "app", app, BUDGET, new Date(t0 + i * 60_000)).id);
    }
    const keep2 = { keep_per_label: 2, max_age_s: 1e9, max_bytes: 1e12 };
    expect(() => pruneSnapshots(store, keep2, new Date(t0 + 1e6), { afterRemove: () => { throw new Error("killed after a manifest"); } })).toThrow("killed after a manifest");
    expectConsistent(store, false);
    let unlinked = 0;
    expect(() => pruneSnapshots(store, keep2, new Date(t0 + 1e6), { beforeUnlink: () => { if (++unlinked === 2) throw new Error("killed mid-sweep"); } })).toThrow("killed mid-sweep");
    expectConsistent(store, false);
    expect(storedBlobs(store).length).toBeGreaterThan(new Set(listSnapshots(store).flatMap((s) => readManifest(store, s.id).entries.flatMap((e) => (e.sha256 ? [e.sha256] : [])))).size);
    pruneSnapshots(store, keep2, new Date(t0 + 1e6));
    expect(listSnapshots(store).map((s) => s.id)).toEqual([ids[3], ids[2]]);
    expectConsistent(store, true);
    for (const id of [ids[2], ids[3]]) expect(restoreSnapshot(store, readManifest(store, id as string), app, BUDGET).identical).toBe(true);
  });

  it("hostile: a snapshot failed after storing some blobs keeps none of them; one killed there leaves blobs no manifest names, which the start-up sweep removes, the retained snapshot whole", () => {
    const { store, app } = fresh();
    seed(app);
    const kept = takeSnapshot(store, "app", app, BUDGET);
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    fs.writeFileSync(path.join(app, "lib", "a.js"), "module.exports = 2;\n");
    const e = thrownBy(() => takeSnapshot(store, "app", app, BUDGET, new Date(), { beforeOpen: (p) => { if (p === "lib/a.js") throw new LeaseholdError("INTERNAL", "failed mid-snapshot"); } }));
    expect(e.message).toBe("failed mid-snapshot");
    expect(listSnapshots(store).map((s) => s.id)).toEqual([kept.id]);
    expect(fs.existsSync(blobFile(store, sha256("version=2\n")))).toBe(false);
    expectConsistent(store, true);
    // Killed at the same point: config.txt's blob is stored, no manifest names it.
    const child = runChild(path.dirname(app), "kill-mid-snapshot.ts", `takeSnapshot(${JSON.stringify(store)}, "app", ${JSON.stringify(app)}, ${JSON.stringify(BUDGET)}, new Date(), { beforeOpen: (p) => { if (p === "lib/a.js") process.kill(process.pid, "SIGKILL"); } });`);
    expect([child.signal, child.stderr]).toEqual(["SIGKILL", ""]);
    expect(listSnapshots(store).map((s) => s.id)).toEqual([kept.id]);
    expect(fs.existsSync(blobFile(store, sha256("version=2\n")))).toBe(true);
    expectConsistent(store, false);
    expect(sweepPartialSnapshots(store)).toBe(1);
    expect(fs.existsSync(blobFile(store, sha256("version=2\n")))).toBe(false);
    expectConsistent(store, true);
    expect(restoreSnapshot(store, readManifest(store, kept.id), app, BUDGET).identical).toBe(true);
  });

  it("a leasehold.snapshot/1 snapshot on disk is migrated at store open (its data/<n> become blobs after a hash check, its manifest rewritten) and restores; one whose stored bytes do not match is removed", () => {
    const { store, app } = fresh();
    seed(app);
    const v2 = takeSnapshot(store, "app", app, BUDGET);
    // The v1 layout of the same tree: data/<n> per regular file, the manifest naming n.
    const asV1 = (id: string, corrupt: boolean) => {
      fs.mkdirSync(path.join(store, id, "data"), { recursive: true, mode: 0o700 });
      let n = 0;
      const entries = v2.entries.map((e) => {
        if (e.type !== "file") return e;
        const bytes = fs.readFileSync(blobFile(store, e.sha256 as string));
        // The damaged one's first file: bytes that do not hash to what its manifest names (a content no other snapshot has).
        if (corrupt && n === 0) {
          fs.writeFileSync(path.join(store, id, "data", String(n)), "tampered");
          return { ...e, sha256: sha256("what the manifest says"), data: n++ };
        }
        fs.writeFileSync(path.join(store, id, "data", String(n)), bytes);
        return { ...e, data: n++ };
      });
      const { schema: _s, entries: _e, ...header } = v2;
      fs.writeFileSync(path.join(store, id, "manifest.json"), JSON.stringify({ ...header, id, schema: "leasehold.snapshot/1", entries }));
      fs.writeFileSync(path.join(store, id, "summary.json"), JSON.stringify({ ...header, id }));
    };
    asV1("s1-00000001", false);
    asV1("s1-00000002", true);
    fs.rmSync(path.join(store, v2.id), { recursive: true });
    fs.rmSync(path.join(store, "blobs"), { recursive: true });
    expect(migrateStore(store)).toEqual({ migrated: ["s1-00000001"], dropped: ["s1-00000002"] });
    expect(fs.readdirSync(path.join(store, "s1-00000001")).sort()).toEqual(["manifest.json", "summary.json"]);
    expect(listSnapshots(store).map((s) => s.id)).toEqual(["s1-00000001"]);
    expectConsistent(store, true);
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    expect(restoreSnapshot(store, readManifest(store, "s1-00000001"), app, BUDGET)).toMatchObject({ identical: true, tree_digest: v2.tree_digest });
  });

  it("a restore records the stamps of the files it made from blobs: the label's next snapshot does not open them (the linked ones, whose ctime the old tree's removal moved, it reads)", () => {
    const { store, app } = fresh();
    seed(app);
    const snap = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:00:00Z")));
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:01:00Z")));
    expect(restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET).identical).toBe(true);
    const opened: string[] = [];
    const next = takeSnapshot(store, "app", app, BUDGET, new Date(Date.parse("2026-01-01T00:02:00Z")), { beforeOpen: (p) => opened.push(p) });
    expect(next.tree_digest).toBe(snap.tree_digest);
    expect(opened).toEqual(["lib/a.js", "lib/big.bin"]);
    expectConsistent(store, false);
  });

  it("hostile: a host write between restore's unchanged check of a live file and its link is not taken as known: the file is made from the blob", () => {
    const { store, app } = fresh();
    seed(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    let wrote = false;
    const restored = restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET, {
      beforeLink: (p) => {
        if (p !== "lib/a.js") return;
        fs.writeFileSync(path.join(app, "lib", "a.js"), "module.exports = 666;\n");
        wrote = true;
      },
    });
    expect(wrote).toBe(true);
    expect(restored).toMatchObject({ identical: true, tree_digest: snap.tree_digest });
    expect(fs.readFileSync(path.join(app, "lib", "a.js"), "utf8")).toBe("module.exports = 1;\n");
    expect(digestOf(app)).toBe(snap.tree_digest);
  });

  it("hostile: a guest killed between the swap and the chmod leaves the old tree under the staging name, still its owner's: the next restore recognises it by the swap record and removes it; another user's directory of the prefix stays", () => {
    const { store, app } = fresh();
    fs.chownSync(app, 1000, 1000);
    fs.chmodSync(app, 0o755);
    seed(app);
    const snap = takeSnapshot(store, "app", app, BUDGET);
    fs.writeFileSync(path.join(app, "config.txt"), "version=2\n");
    const foreign = path.join(path.dirname(app), ".app.leasehold-restore-foreign");
    fs.mkdirSync(foreign);
    fs.chownSync(foreign, 1000, 1000);
    // The restore runs in a child that SIGKILLs itself right after the swap.
    const child = runChild(path.dirname(app), "kill-after-swap.ts", `restoreSnapshot(${JSON.stringify(store)}, readManifest(${JSON.stringify(store)}, ${JSON.stringify(snap.id)}), ${JSON.stringify(app)}, ${JSON.stringify(BUDGET)}, { afterSwap: () => process.kill(process.pid, "SIGKILL") });`);
    expect([child.signal, child.stderr]).toEqual(["SIGKILL", ""]);
    expect(digestOf(app)).toBe(snap.tree_digest);
    const left = fs.readdirSync(path.dirname(app)).filter((n) => n.startsWith(".app.leasehold-restore-") && n !== path.basename(foreign));
    expect(left).toHaveLength(1);
    const leftSt = fs.lstatSync(path.join(path.dirname(app), left[0] as string));
    expect([leftSt.uid, leftSt.mode & 0o7777]).toEqual([1000, 0o755]);
    fs.writeFileSync(path.join(app, "config.txt"), "version=3\n");
    expect(restoreSnapshot(store, readManifest(store, snap.id), app, BUDGET).identical).toBe(true);
    expect(fs.readdirSync(path.dirname(app)).filter((n) => n.startsWith(".app.leasehold-restore-"))).toEqual([path.basename(foreign)]);
    expect(fs.statSync(foreign).uid).toBe(1000);
  });
});
