// What a workload sees of the host: masked /proc entries, no /usr/local,
// the distribution's os-release, HOME and LANG, and what mountinfo shows.
import { closeSync, constants, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, type LaunchResult, type SandboxPolicyInput } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

/** What the host itself shows at a path: bytes (up to 4 KiB, non-blocking: /proc/kmsg waits otherwise) or
 * directory entries; null when absent or unreadable. */
function hostView(p: string): number | null {
  try {
    if (statSync(p).isDirectory()) return readdirSync(p).length;
    const fd = openSync(p, constants.O_RDONLY | constants.O_NONBLOCK);
    try { return readSync(fd, Buffer.alloc(4096), 0, 4096, null); } finally { closeSync(fd); }
  } catch {
    return null;
  }
}
// The entries the launcher masks (native/SECURITY.md); the test keeps its own copy.
const MASKED = [
  "/proc/cmdline", "/proc/config.gz", "/proc/sys/kernel/random/boot_id", "/proc/kcore", "/proc/keys", "/proc/key-users",
  "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/kallsyms", "/proc/latency_stats", "/proc/sysrq-trigger",
  "/proc/interrupts", "/proc/iomem", "/proc/ioports", "/proc/dma", "/proc/mtrr", "/proc/partitions", "/proc/diskstats",
  "/proc/swaps", "/proc/consoles", "/proc/misc", "/proc/devices", "/proc/kmsg", "/proc/kpagecount", "/proc/kpageflags",
  "/proc/kpagecgroup", "/proc/vmallocinfo", "/proc/acpi", "/proc/scsi", "/proc/asound", "/proc/bus", "/proc/driver",
  "/proc/irq", "/proc/fs", "/proc/tty",
];
// Reading /proc/kmsg consumes the log (a syslog daemon would miss those lines): ask /dev/kmsg, the
// same buffer read without consuming it.
const hostSource: Record<string, string> = { "/proc/kmsg": "/dev/kmsg" };
const hostRows = MASKED.map((p) => ({ path: p, host: hostView(hostSource[p] ?? p) }));

// Inside: one line per path, "<path> <size>|ERR <errno>" (size: bytes read, or entries listed).
const readAll = `
import errno, os, sys
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            n = len(os.listdir(p))
        else:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
            n = len(os.read(fd, 4096))
            os.close(fd)
        print(p, n)
    except OSError as e:
        print(p, "ERR", errno.errorcode.get(e.errno, str(e.errno)))
`;

let wd = "";
const inside = new Map<string, string>();
const run = (extra: Partial<SandboxPolicyInput>): Promise<LaunchResult> => launch({ ...basePolicy(wd), ...extra });
beforeAll(async () => {
  setupNative();
  wd = makeWorkdir();
  const r = await run({ argv: ["/usr/bin/python3", "-c", readAll, ...MASKED] });
  for (const line of r.stdout.toString().trim().split("\n")) {
    const i = line.indexOf(" ");
    inside.set(line.slice(0, i), line.slice(i + 1));
  }
});
afterAll(() => removeWorkdir(wd));

describe("masked /proc entries show nothing of the host", () => {
  for (const row of hostRows) {
    const hostHas = row.host !== null && row.host > 0;
    it.skipIf(!hostHas)(`${row.path}: host shows ${row.host === null ? "nothing (absent or unreadable on this kernel: row not tested)" : `${row.host} ${hostHas ? "bytes/entries" : "(empty on this host: row not tested)"}`}, the lease shows 0`, () => {
      expect(inside.get(row.path)).toBe("0");
    });
  }
});

describe("host facts", () => {
  it("/usr/local of the host is hidden behind an empty directory", async () => {
    const hostEntries = readdirSync("/usr/local/bin");
    expect(hostEntries.length).toBeGreaterThan(0);
    const r = await run({ argv: ["/bin/sh", "-c", "ls -A /usr/local; echo --; ls -A /usr/local/bin 2>&1"] });
    expect(r.stdout.toString()).toMatch(/^--\nls: cannot access '\/usr\/local\/bin': No such file or directory\n$/);
  });
  it("a ro_bind under /usr/local shows that path only", async () => {
    const hostEntries = readdirSync("/usr/local/bin").sort();
    const r = await run({ argv: ["/bin/sh", "-c", "ls -A /usr/local; echo --; ls -A /usr/local/bin"], ro_binds: [...(basePolicy(wd).ro_binds ?? []), "/usr/local/bin"] });
    expect(r.stdout.toString()).toBe(`bin\n--\n${hostEntries.join("\n")}\n`);
  });
  it("an exec_allow directory under /usr/local (manifest and ceiling allow it) is bound on its own; its /usr/local neighbours stay hidden", async () => {
    const hostEntries = readdirSync("/usr/local/bin").sort();
    const base = basePolicy(wd);
    const r = await run({ argv: ["/bin/sh", "-c", "ls -A /usr/local; echo --; ls -A /usr/local/bin"], exec_allow: [...(base.exec_allow ?? []), "/usr/local/bin"] });
    expect(r.stdout.toString()).toBe(`bin\n--\n${hostEntries.join("\n")}\n`);
  });
  it("/etc/os-release is readable and equal to the host's", async () => {
    const host = readFileSync(realpathSync("/etc/os-release"), "utf8");
    expect(host).toMatch(/^ID=/m);
    const r = await run({ argv: ["/bin/cat", "/etc/os-release"] });
    expect(r.stdout.toString()).toBe(host);
  });
  it("HOME=/tmp and LANG=C.UTF-8 by default; the UTF-8 locale works (locale, python3 printing non-ASCII)", async () => {
    const r = await run({ argv: ["/bin/sh", "-c", "echo \"$HOME $LANG\"; locale >/dev/null; python3 -c 'import sys; print(sys.stdout.encoding, \"\\u00e9\\u4e2d\")'"] });
    expect(r.stderr.toString()).toBe(""); // `locale` complains on stderr when the locale cannot be loaded
    expect(r.stdout.toString()).toBe("/tmp C.UTF-8\nutf-8 é中\n");
  });
  it("a policy's own HOME and LANG win", async () => {
    const r = await run({ argv: ["/bin/sh", "-c", "echo \"$HOME $LANG\""], env: { PATH: "/usr/bin:/bin", HOME: "/work", LANG: "C" } });
    expect(r.stdout.toString()).toBe("/work C\n");
  });
  it("mountinfo shows the workspace's path within its host file system as the /work mount's root (documented; a bind mount cannot hide it)", async () => {
    // The host's view: the mount holding the workdir, and the path below it.
    const lines = readFileSync("/proc/self/mountinfo", "utf8").trim().split("\n").map((l) => l.split(" "));
    const holder = lines.filter((f) => wd === f[4] || wd.startsWith(`${f[4] === "/" ? "" : f[4]}/`)).sort((a, b) => b[4]!.length - a[4]!.length)[0]!;
    const expectedRoot = `${holder[3] === "/" ? "" : holder[3]}${holder[4] === "/" ? wd : wd.slice(holder[4]!.length)}`;
    const r = await run({ argv: ["/bin/cat", "/proc/self/mountinfo"] });
    const work = r.stdout.toString().trim().split("\n").map((l) => l.split(" ")).find((f) => f[4] === "/work");
    expect(work?.[3]).toBe(expectedRoot);
    console.log(`[host-view] /work in mountinfo: ${work!.join(" ")}`);
  });
});
