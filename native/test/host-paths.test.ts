// Host paths at /host/<label>: opened by descriptor without following any
// symlink, bound read-only (or read-write through an idmapped mount whose
// writes belong on the host to the label's owner), and nothing of the host
// beyond the opened directory reachable through them. Each hostile attempt
// must fail with a specific errno and leave the host tree as it was.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rejectionOf } from "../../test/support/refusals";
import { launch, probeIdmappedMount, renameExchangeAt, type SandboxPolicyInput } from "../index";
import { PROBE, TEST_ROOT, basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

const OWNER = 4321;
const made: string[] = [];
const fresh = (): string => {
  const d = makeWorkdir();
  made.push(d);
  return d;
};

beforeAll(() => setupNative());
afterAll(() => made.forEach(removeWorkdir));

const sh = (wd: string, script: string, hostPaths: SandboxPolicyInput["host_paths"], extra: Partial<SandboxPolicyInput> = {}) =>
  launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", script], host_paths: hostPaths, ...extra });
const probeOp = (wd: string, op: string, arg: string, hostPaths: SandboxPolicyInput["host_paths"]) =>
  launch({ ...basePolicy(wd), argv: [PROBE, op, arg], host_paths: hostPaths });

/** A host directory that looks like /var/log: a readable log and a symlink planted at /etc/shadow. */
function logsTree(): string {
  const d = join(fresh(), "logs");
  mkdirSync(d);
  chmodSync(d, 0o755);
  writeFileSync(join(d, "app.log"), "line one\nline two\n");
  chmodSync(join(d, "app.log"), 0o644);
  symlinkSync("/etc/shadow", join(d, "shadow-link"));
  return d;
}

// The file-system check runs the helper's own code on a directory like the ones below.
mkdirSync(TEST_ROOT, { recursive: true });
const idmap = probeIdmappedMount(TEST_ROOT);
const idmapSkip = idmap.ok ? "" : ` (skipped: idmapped mounts probed absent here: ${idmap.reason})`;

describe("read-only host paths", () => {
  it("reads a real host file through /host/<label>, and the mount reads back ro,nosuid,nodev", async () => {
    const logs = logsTree();
    const r = await sh(fresh(), "cat /host/logs/app.log", [{ label: "logs", path: logs, mode: "ro" }]);
    expect(r.exit.code).toBe(0);
    expect(r.stdout.toString()).toBe("line one\nline two\n");
    const hp = r.host_paths?.find((h) => h.label === "logs");
    expect(hp?.mode).toBe("ro");
    expect(hp?.options).toEqual(expect.arrayContaining(["ro", "nosuid", "nodev", "noexec"]));
  });

  it("cannot be written, remounted rw, have its read-only flag cleared or be unmounted from inside; the host tree is unchanged", async () => {
    const logs = logsTree();
    const hp = [{ label: "logs", path: logs, mode: "ro" as const }];
    const wd = fresh();
    const attempts: Array<[string, string, string]> = [
      ["write", "/host/logs/new.log", "ERR EROFS"],
      ["write", "/host/logs/app.log", "ERR EROFS"],
      ["remount_rw_at", "/host/logs", "ERR EPERM"],
      ["setattr_rw_at", "/host/logs", "ERR EPERM"],
      ["umount_at", "/host/logs", "ERR EPERM"],
    ];
    for (const [op, arg, want] of attempts) {
      const r = await probeOp(wd, op, arg, hp);
      expect(`${op} ${arg}: ${r.stdout.toString().trim()}`).toBe(`${op} ${arg}: ${want}`);
    }
    expect(readFileSync(join(logs, "app.log"), "utf8")).toBe("line one\nline two\n");
    expect(existsSync(join(logs, "new.log"))).toBe(false);
  });

  it("a symlink planted in the tree pointing at /etc/shadow resolves inside the lease, never to the host's file", async () => {
    const logs = logsTree();
    const r = await sh(fresh(), "cat /host/logs/shadow-link; echo rc=$?", [{ label: "logs", path: logs, mode: "ro" }]);
    expect(r.stdout.toString()).toContain("rc=1");
    expect(r.stderr.toString()).toMatch(/No such file or directory/);
    expect(r.stdout.toString()).not.toMatch(/root:/);
  });

  it("refuses a host path that is a symlink, or passes through one, before anything runs (UNENFORCEABLE, ELOOP)", async () => {
    const base = fresh();
    const real = logsTree();
    symlinkSync(real, join(base, "link-to-logs"));
    symlinkSync("/etc", join(base, "etc-link"));
    mkdirSync(join(base, "parent"));
    symlinkSync(base, join(base, "parent", "up"));
    for (const path of [join(base, "link-to-logs"), join(base, "etc-link"), join(base, "parent", "up", "link-to-logs")]) {
      const e = await rejectionOf(sh(fresh(), "echo RAN", [{ label: "logs", path, mode: "ro" }]));
      expect(e.code).toBe("UNENFORCEABLE");
      expect(e.message).toMatch(/host_path: ELOOP/);
    }
  });

  it("a symlink swapped in while leases start never leads out: each lease either is refused or sees the real directory", async () => {
    const base = fresh();
    const target = join(base, "swap");
    const realDir = join(base, "real");
    mkdirSync(realDir);
    writeFileSync(join(realDir, "marker"), "real\n");
    chmodSync(realDir, 0o755);
    chmodSync(join(realDir, "marker"), 0o644);
    symlinkSync("/etc", join(base, "evil"));
    // A separate process flips `swap` between the real directory and a link to /etc as fast as it can.
    const flipper: ChildProcess = spawn(process.execPath, ["-e", `
      const fs = require("node:fs");
      const [target, real, evil] = process.argv.slice(1);
      for (;;) {
        try { fs.renameSync(real, target); fs.renameSync(target, real); fs.renameSync(evil, target); fs.renameSync(target, evil); } catch {}
      }`, target, realDir, join(base, "evil")], { stdio: "ignore" });
    const seen = { real: 0, refused: 0 };
    try {
      for (let i = 0; i < 40; i++) {
        try {
          const r = await sh(fresh(), "ls /host/swap; cat /host/swap/marker 2>/dev/null; test -e /host/swap/passwd && echo LEAKED; true", [{ label: "swap", path: target, mode: "ro" }]);
          expect(r.stdout.toString()).not.toContain("LEAKED");
          expect(r.stdout.toString()).toContain("real");
          seen.real++;
        } catch (error) {
          const e = error as { code?: string; message?: string };
          expect(e.code).toBe("UNENFORCEABLE");
          expect(e.message).toMatch(/host_path: (ELOOP|ENOENT)/);
          seen.refused++;
        }
      }
    } finally {
      flipper.kill("SIGKILL");
    }
    expect(seen.real + seen.refused).toBe(40);
  }, 120_000);

  it("refuses the policy shape the helper must never get: the root, a relative path, a label twice", () => {
    const wd = fresh();
    const bad: SandboxPolicyInput["host_paths"][] = [
      [{ label: "all", path: "/", mode: "ro" }],
      [{ label: "rel", path: "var/log", mode: "ro" }],
      [{ label: "a", path: "/var/log", mode: "ro" }, { label: "a", path: "/srv", mode: "ro" }],
      [{ label: "x", path: "/var/log", mode: "ro", owner: { uid: 1, gid: 1 } }],
    ];
    return Promise.all(bad.map(async (hp) => expect((await rejectionOf(sh(wd, "true", hp))).code).toBe("INVALID_ARGUMENT")));
  });
});

describe("read-write host paths", () => {
  /** A host directory owned by OWNER (not root, not a lease uid) with one file the job edits. */
  function appTree(): string {
    const d = join(fresh(), "app");
    mkdirSync(d);
    writeFileSync(join(d, "config.txt"), "version=1\n");
    chownSync(d, OWNER, OWNER);
    chownSync(join(d, "config.txt"), OWNER, OWNER);
    chmodSync(d, 0o755);
    chmodSync(join(d, "config.txt"), 0o644);
    return d;
  }

  it.skipIf(!idmap.ok)(`files the job creates or changes belong on the host to the path's owner, never to the lease uid; the mount reads back idmapped${idmapSkip}`, async () => {
    const app = appTree();
    const r = await sh(fresh(), "echo version=2 > /host/app/config.txt && mkdir /host/app/d && echo new > /host/app/d/new.txt && stat -c '%u' /host/app/config.txt", [{ label: "app", path: app, mode: "rw" }]);
    expect(r.exit.code).toBe(0);
    expect(readFileSync(join(app, "config.txt"), "utf8")).toBe("version=2\n");
    for (const p of ["config.txt", "d", "d/new.txt"]) {
      const st = lstatSync(join(app, p));
      expect(`${p} ${st.uid}:${st.gid}`).toBe(`${p} ${OWNER}:${OWNER}`);
    }
    // Inside, the owner's files show as the lease's own (inner uid 1000).
    expect(r.stdout.toString().trim()).toBe("1000");
    expect(r.host_paths?.find((h) => h.label === "app")?.options).toEqual(expect.arrayContaining(["rw", "nosuid", "nodev", "idmapped"]));
  });

  it.skipIf(!idmap.ok)(`an explicit owner: the job writes as it; a file another uid holds stays unwritable even at mode 0666 (EACCES)${idmapSkip}`, async () => {
    const app = appTree();
    chownSync(app, 5555, 5556);
    chmodSync(join(app, "config.txt"), 0o666); // held by OWNER, not by the label's owner
    const r = await sh(fresh(), "echo x > /host/app/made.txt; echo made=$?; echo y >> /host/app/config.txt; echo other=$?", [{ label: "app", path: app, mode: "rw", owner: { uid: 5555, gid: 5556 } }]);
    expect(r.stdout.toString()).toMatch(/made=0\nother=[12]/);
    expect(r.stderr.toString()).toMatch(/Permission denied/);
    const st = statSync(join(app, "made.txt"));
    expect([st.uid, st.gid]).toEqual([5555, 5556]);
    expect(readFileSync(join(app, "config.txt"), "utf8")).toBe("version=1\n");
  });

  it.skipIf(!idmap.ok)(`writes outside the rw label are still discarded: an ro label beside it stays read-only and /tmp is thrown away${idmapSkip}`, async () => {
    const app = appTree();
    const logs = logsTree();
    const r = await sh(fresh(), "echo x > /host/logs/x 2>/dev/null; echo logs=$?; echo t > /tmp/t; echo x > /host/app/ok; echo app=$?", [
      { label: "app", path: app, mode: "rw" },
      { label: "logs", path: logs, mode: "ro" },
    ]);
    expect(r.stdout.toString()).toMatch(/logs=[12][\s\S]*app=0/);
    expect(existsSync(join(logs, "x"))).toBe(false);
    expect(existsSync(join(app, "ok"))).toBe(true);
  });

  it.skipIf(!idmap.ok)(`a setuid file cannot be made in the rw tree${idmapSkip}`, async () => {
    const app = appTree();
    const r = await sh(fresh(), "cp /bin/true /host/app/t && chmod 4755 /host/app/t; echo rc=$?", [{ label: "app", path: app, mode: "rw" }]);
    expect(r.stdout.toString()).toMatch(/rc=1/);
    expect(statSync(join(app, "t")).mode & 0o6000).toBe(0);
  });

  it("refuses rw where the file system takes no idmapping, with UNENFORCEABLE saying why (ramfs here)", async () => {
    const dir = join(fresh(), "ramfs");
    mkdirSync(dir);
    const mount = spawn("mount", ["-t", "ramfs", "none", dir], { stdio: "ignore" });
    const code = await new Promise<number | null>((resolve) => mount.on("exit", resolve));
    expect(code).toBe(0);
    try {
      expect(probeIdmappedMount(dir)).toMatchObject({ ok: false, reason: expect.stringMatching(/idmapped mount/) });
      const e = await rejectionOf(sh(fresh(), "echo RAN", [{ label: "ram", path: dir, mode: "rw" }]));
      expect(e.code).toBe("UNENFORCEABLE");
      expect(e.message).toMatch(/rw needs an idmapped mount/);
    } finally {
      const umount = spawn("umount", [dir], { stdio: "ignore" });
      await new Promise((resolve) => umount.on("exit", resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("renameExchangeAt (the restore's swap)", () => {
  it("swaps two directories of one held parent in one step, each keeping its own contents", () => {
    const parent = fresh();
    mkdirSync(join(parent, "label"));
    writeFileSync(join(parent, "label", "old"), "old");
    mkdirSync(join(parent, "staging"));
    writeFileSync(join(parent, "staging", "new"), "new");
    const inodes = [statSync(join(parent, "label")).ino, statSync(join(parent, "staging")).ino];
    const fd = openSync(parent, "r");
    try {
      expect(renameExchangeAt(fd, "label", "staging")).toEqual({ ok: true });
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(join(parent, "label", "new"), "utf8")).toBe("new");
    expect(readFileSync(join(parent, "staging", "old"), "utf8")).toBe("old");
    expect([statSync(join(parent, "staging")).ino, statSync(join(parent, "label")).ino]).toEqual(inodes);
  });

  it("hostile: a name that is not one component (EINVAL), a missing name (ENOENT) and a mount point (EXDEV or EBUSY) are refused and nothing moves", () => {
    const parent = fresh();
    mkdirSync(join(parent, "label"));
    mkdirSync(join(parent, "mnt"));
    mkdirSync(join(parent, "label", "inner"));
    const fd = openSync(parent, "r");
    try {
      for (const [a, b] of [["label/inner", "mnt"], ["..", "label"], ["label", "."], ["", "label"]]) expect(renameExchangeAt(fd, a as string, b as string)).toEqual({ ok: false, errno: "EINVAL" });
      expect(renameExchangeAt(fd, "label", "absent")).toEqual({ ok: false, errno: "ENOENT" });
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "lh-exchange-test", join(parent, "mnt")]);
      try {
        const crossed = renameExchangeAt(fd, "label", "mnt");
        expect(crossed.ok).toBe(false);
        expect(["EXDEV", "EBUSY"]).toContain(crossed.ok ? "" : crossed.errno);
      } finally {
        execFileSync("umount", [join(parent, "mnt")]);
      }
    } finally {
      closeSync(fd);
    }
    expect(existsSync(join(parent, "label", "inner"))).toBe(true);
  });
});
