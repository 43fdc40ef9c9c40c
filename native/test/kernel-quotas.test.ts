// Host-wide kernel quotas: nothing a lease takes may deny the host (or the
// next lease) a kernel resource while it runs. For each resource a lease
// takes as much as it can (bounded loops, workloads/quota.c) and holds it;
// meanwhile the host reads its own counter and makes one allocation of the
// same resource itself; the lease is then released and the counter read
// again. A resource is safe when the lease is refused it, or when what it
// takes is counted where only the lease is charged: its own IPC namespace,
// or its own per-lease host uid (the lease's user namespace is created after
// the helper became that uid, so the kernel's per-user counts — ucounts —
// charge the lease uid at every level, never root). The table is printed.
import { execFileSync, spawnSync } from "node:child_process";
import { constants, chmodSync, existsSync, openSync, closeSync, readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, leaseOpenFileLimit, NOFILE_FLOOR, type LaunchResult, type SandboxPolicyInput } from "../index";
import { BIN_DIR, basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

const QUOTA = join(BIN_DIR, "quota");
const NOBODY = 65534;
setupNative();
execFileSync("gcc", ["-O1", "-o", QUOTA, fileURLToPath(new URL("./workloads/quota.c", import.meta.url))]);

// The smallest pids_max that leaves fewer than NOFILE_FLOOR files per process.
const tooManyPids = Math.floor(Number(readFileSync("/proc/sys/fs/file-max", "utf8")) / (8 * NOFILE_FLOOR)) + 1;
const sysctl = (name: string): string => {
  try { return readFileSync(`/proc/sys/${name}`, "utf8").trim(); } catch (error) { return `unreadable (${(error as NodeJS.ErrnoException).code ?? "?"})`; }
};
const lines = (path: string): number => existsSync(path) ? readFileSync(path, "utf8").trim().split("\n").filter((l) => l !== "").length : -1;
const SYSV = ["shm", "sem", "msg"] as const;
/**
 * The owner and creator uids of every SysV object in the host's IPC
 * namespace. A lease's object that leaked there would carry the lease's
 * host uid; objects of other processes on the machine (a PostgreSQL
 * server starting, the browser tests' hub) carry their own, so the check
 * looks for the lease's uid, not at the count.
 */
const hostSysvOwners = (): number[] => SYSV.flatMap((kind) => {
  const [header = "", ...rows] = readFileSync(`/proc/sysvipc/${kind}`, "utf8").trim().split("\n");
  const columns = header.trim().split(/\s+/);
  const at = ["uid", "cuid"].map((name) => columns.indexOf(name));
  return rows.filter((row) => row.trim() !== "").flatMap((row) => { const f = row.trim().split(/\s+/); return at.map((i) => Number(f[i])); });
});
/** One allocation of the resource on the host, as `uid`: "OK" or "ERR <errno>". */
const hostOne = (op: string, uid: number): string => {
  const r = spawnSync(QUOTA, [op], { encoding: "utf8", uid, gid: uid });
  return (r.stdout || `exit ${r.status} ${r.signal ?? ""}`).trim();
};

type Expect =
  | { kind: "refused"; errnos: string[] }
  | { kind: "namespace" }
  | { kind: "lease-uid" }
  | { kind: "bounded" };
interface Resource {
  name: string;
  op: string;
  /** host-wide counter shown in the table ("" when the kernel keeps none visible) */
  counter: { label: string; read: () => string };
  /** the host's own allocation while the lease holds the resource */
  host?: { op: string; uid: number };
  expect: Expect;
  tmpBytes?: number;
  /** policy fields the row changes (only to look under a layer) */
  extra?: Partial<SandboxPolicyInput>;
}

const none = { label: "—", read: () => "—" };
const resources: Resource[] = [
  { name: "AIO events (io_setup)", op: "aio", counter: { label: "fs/aio-nr", read: () => sysctl("fs/aio-nr") }, host: { op: "aio-one", uid: 0 }, expect: { kind: "refused", errnos: ["EPERM"] } },
  { name: "io_uring instances", op: "io_uring", counter: none, expect: { kind: "refused", errnos: ["EPERM"] } },
  // ucounts: charged to (namespace, uid) at each level up to the host's, each
  // level against that level's limit — the lease uid at the host's level.
  { name: "inotify instances", op: "inotify", counter: { label: "fs/inotify/max_user_instances (limit)", read: () => sysctl("fs/inotify/max_user_instances") }, host: { op: "inotify-one", uid: 0 }, expect: { kind: "lease-uid" } },
  { name: "inotify watches", op: "inotify-watches", counter: { label: "fs/inotify/max_user_watches (limit)", read: () => sysctl("fs/inotify/max_user_watches") }, host: { op: "inotify-one", uid: 0 }, expect: { kind: "lease-uid" }, tmpBytes: 64 << 20 },
  { name: "keys (add_key)", op: "keys", counter: { label: "/proc/key-users lines", read: () => String(lines("/proc/key-users")) }, expect: { kind: "refused", errnos: ["EPERM"] } },
  // mq_open creates a file on the IPC namespace's internal mqueue mount,
  // outside every Landlock rule of the lease: EACCES. Under it, with
  // Landlock off, the queues live in the lease's own IPC namespace
  // (queues_max per namespace) and their bytes count against the lease
  // uid's RLIMIT_MSGQUEUE.
  { name: "POSIX message queues", op: "mqueue", counter: none, host: { op: "mqueue-one", uid: NOBODY }, expect: { kind: "refused", errnos: ["EACCES"] } },
  { name: "POSIX message queues, Landlock off", op: "mqueue", counter: none, host: { op: "mqueue-one", uid: NOBODY }, expect: { kind: "namespace" }, extra: { landlock: { required: false, scope: false } } },
  { name: "SysV shm/sem/msg", op: "sysv", counter: { label: "/proc/sysvipc/* entries", read: () => String(SYSV.reduce((n, k) => n + lines(`/proc/sysvipc/${k}`) - 1, 0)) }, expect: { kind: "namespace" } },
  // pipe-user-pages-soft is per user (the kernel's user_struct, by host uid).
  { name: "pipe buffers", op: "pipes", counter: { label: "fs/pipe-user-pages-soft (limit)", read: () => sysctl("fs/pipe-user-pages-soft") }, host: { op: "pipe-one", uid: NOBODY }, expect: { kind: "lease-uid" } },
  { name: "user namespaces", op: "userns", counter: { label: "user/max_user_namespaces (limit)", read: () => sysctl("user/max_user_namespaces") }, expect: { kind: "refused", errnos: ["EPERM"] } },
  // No kernel-wide cap: each lock record is kernel memory charged to the
  // lease's memory cgroup.
  { name: "file locks", op: "locks", counter: { label: "/proc/locks lines", read: () => String(lines("/proc/locks")) }, host: { op: "lock-one", uid: NOBODY }, expect: { kind: "bounded" } },
  { name: "fanotify groups", op: "fanotify", counter: none, expect: { kind: "refused", errnos: ["EPERM"] } },
  { name: "perf events", op: "perf", counter: none, expect: { kind: "refused", errnos: ["EPERM"] } },
  { name: "BPF maps", op: "bpf", counter: none, expect: { kind: "refused", errnos: ["EPERM"] } },
  { name: "userfaultfd", op: "userfaultfd", counter: none, expect: { kind: "refused", errnos: ["EPERM"] } },
  // fs/file-max is host-wide: a lease holds at most RLIMIT_NOFILE × pids_max.
  { name: "open files", op: "files", counter: { label: "fs/file-nr (allocated)", read: () => sysctl("fs/file-nr").split(/\s+/)[0] ?? "?" }, host: { op: "files-one", uid: NOBODY }, expect: { kind: "bounded" } },
];

interface Row {
  r: Resource;
  before: string;
  during: string;
  after: string;
  took: number;
  stop: string;
  hostBefore: string;
  hostDuring: string;
  /** uids owning or having created the host namespace's SysV objects while the lease held its own */
  sysvOwnersDuring: number[];
  run: LaunchResult;
}
const rows = new Map<string, Row>();

/** Runs `quota <op> hold` in a lease; measures while it holds what it took. */
async function survey(r: Resource): Promise<Row> {
  const wd = makeWorkdir();
  const release = join(wd, "release");
  execFileSync("mkfifo", ["-m", "0666", release]);
  chmodSync(release, 0o666);
  const before = r.counter.read();
  // The host's own answer before the lease: what "still allocates" is compared with.
  const hostBefore = r.host ? hostOne(r.host.op, r.host.uid) : "—";
  let hostDuring = "—";
  let held!: () => void;
  const heldOrDone = new Promise<void>((resolve) => { held = resolve; });
  const running = launch(
    { ...basePolicy(wd), argv: [QUOTA, r.op, "hold"], timeout_ms: 30_000, ...(r.tmpBytes ? { tmpfs_tmp_bytes: r.tmpBytes } : {}), ...r.extra },
    { progressEveryMs: 20, onProgress: (p) => { if (p.stdout_bytes > 0) held(); } },
  );
  void running.then(() => held(), () => held());
  await heldOrDone;
  const during = r.counter.read();
  const sysvOwnersDuring = hostSysvOwners();
  if (r.host) hostDuring = `${r.host.uid === 0 ? "root" : `uid ${r.host.uid}`}: ${hostOne(r.host.op, r.host.uid)}`;
  // Opening the FIFO for writing waits for the workload's reader, and closing
  // it is the workload's end-of-file. If the workload ended without opening
  // it, a non-blocking reader of our own lets the pending open finish.
  const released = open(release, "w").then((h) => h.close());
  const run = await running;
  try { closeSync(openSync(release, constants.O_RDONLY | constants.O_NONBLOCK)); } catch { /* released already */ }
  await released;
  const after = r.counter.read();
  removeWorkdir(wd);
  const m = /took=(\d+) stop=(\S+)/.exec(run.stdout.toString());
  return { r, before, during, after, hostBefore, took: m ? Number(m[1]) : -1, stop: m?.[2] ?? `no report (exit ${JSON.stringify(run.exit)})`, hostDuring, sysvOwnersDuring, run };
}

beforeAll(async () => {
  for (const r of resources) rows.set(r.name, await survey(r));
}, 120_000);

afterAll(() => {
  const verdict = (row: Row): string => {
    const e = row.r.expect;
    if (e.kind === "refused") return row.took === 0 ? `refused (${row.stop})` : `TAKEN: ${row.took} before ${row.stop}`;
    if (e.kind === "namespace") return "per-lease IPC namespace";
    if (e.kind === "lease-uid") return "lease uid's own share";
    return row.r.op === "files" ? `RLIMIT_NOFILE ${row.run.enforcement.nofile ?? "?"} × pids_max ${basePolicy("/").pids_max} ≤ fs/file-max / 8` : "no host-wide cap (memory cgroup)";
  };
  const table = [
    "| resource | host counter | before | during | after | lease took (stop) | host allocation during | verdict |",
    "|---|---|---|---|---|---|---|---|",
    ...[...rows.values()].map((w) => `| ${w.r.name} | ${w.r.counter.label} | ${w.before} | ${w.during} | ${w.after} | ${w.took} (${w.stop}) | ${w.hostDuring} | ${verdict(w)} |`),
  ];
  console.log(`[kernel quota survey]\n${table.join("\n")}`);
});

describe("host-wide kernel quotas a lease can consume", () => {
  for (const r of resources) {
    const title = {
      refused: `${r.name}: refused in the lease (${r.expect.kind === "refused" ? r.expect.errnos.join("/") : ""}), nothing taken`,
      namespace: `${r.name}: taken in the lease's own IPC namespace; none of it shows in the host's (no host object owned by the lease uid) and the host still allocates`,
      "lease-uid": `${r.name}: charged to the lease uid; host root or another uid still allocates while the lease holds its share`,
      bounded: `${r.name}: no host-wide cap in reach; the host still allocates while the lease holds what it took`,
    }[r.expect.kind];
    it(title, () => {
      const w = rows.get(r.name);
      expect(w, "survey row").toBeDefined();
      if (!w) return;
      const e = r.expect;
      if (r.host) expect(w.hostBefore, `the host itself could not allocate ${r.name} before the lease: the row cannot judge`).toBe("OK");
      if (e.kind === "refused") {
        expect({ took: w.took, stop: w.stop }).toEqual({ took: 0, stop: expect.stringMatching(new RegExp(`^(${e.errnos.join("|")})$`)) });
        if (r.host) expect(w.hostDuring).toMatch(/: OK$/);
        return;
      }
      expect(w.took, `${r.name}: the lease took some (else the row proves nothing): ${w.stop}`).toBeGreaterThan(0);
      if (r.host) expect(w.hostDuring).toMatch(/: OK$/);
      if (e.kind === "namespace" && r.op === "sysv") {
        expect(w.run.enforcement.uid.host).toBeGreaterThan(0);
        expect(w.sysvOwnersDuring).not.toContain(w.run.enforcement.uid.host);
      }
    });
  }

  it("the inotify row reached the lease's own limit, so the host's allocation during it is meaningful", () => {
    const w = rows.get("inotify instances");
    expect(w?.stop).toBe("EMFILE");
    expect(w?.took).toBeLessThanOrEqual(Number(sysctl("fs/inotify/max_user_instances")));
  });
  it("the pipe row went past the per-user soft limit (F_SETPIPE_SZ refused), yet another uid's pipe still grows to 1 MiB", () => {
    const w = rows.get("pipe buffers");
    const pages = Number(sysctl("fs/pipe-user-pages-soft"));
    expect(w?.stop).toBe("EPERM");
    expect((w?.took ?? 0) * 256).toBeLessThanOrEqual(pages);
  });
  it("open files: one process took its RLIMIT_NOFILE (read back), and that × pids_max stays within an eighth of the host's fs/file-max", () => {
    const w = rows.get("open files");
    const fileMax = Number(sysctl("fs/file-max"));
    expect(w?.stop).toBe("EMFILE");
    // stdin, stdout and stderr are open besides what the loop took
    const perProcess = (w?.took ?? 0) + 3;
    expect(w?.run.enforcement.nofile).toBe(perProcess);
    expect(perProcess * basePolicy("/").pids_max!).toBeLessThanOrEqual(fileMax / 8);
  });
  it("the open-file share: fs/file-max / 8 / pids_max per process; below 64 a launch is refused", () => {
    expect(leaseOpenFileLimit(128, 1_000_000)).toBe(976);
    expect(() => leaseOpenFileLimit(4096, 1_000_000)).toThrow(/pids_max 4096 leaves fewer than 64 open files/);
  });
  it.skipIf(tooManyPids > 65_536)(`a pids_max too large for this host's fs/file-max is refused UNENFORCEABLE before anything runs${tooManyPids > 65_536 ? " (skipped: fs/file-max so large that no pids_max the schema allows is too many)" : ""}`, async () => {
    const wd = makeWorkdir();
    try {
      await expect(launch({ ...basePolicy(wd), pids_max: tooManyPids })).rejects.toMatchObject({ code: "UNENFORCEABLE", details: { field: "pids_max" } });
    } finally {
      removeWorkdir(wd);
    }
  });
  it("the AIO row: the host's fs/aio-nr did not move while the lease held what it could", () => {
    const w = rows.get("AIO events (io_setup)");
    expect(w?.during).toBe(w?.before);
  });
});
