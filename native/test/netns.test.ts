// The lease's network namespace is owned by a user namespace of its own
// (not the host's), so the kernel never broadcasts host uevents into it.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, type LaunchResult } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

const here = dirname(fileURLToPath(import.meta.url));
const listener = readFileSync(join(here, "workloads", "uevent_listen.py"), "utf8");
// A device without a network-namespace tag: its uevents go to every socket on uevent_sock_list.
const TRIGGER = "/sys/devices/virtual/mem/null/uevent";

let wd = "";
beforeAll(() => { setupNative(); wd = makeWorkdir(); });
afterAll(() => removeWorkdir(wd));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits for <dir>/bound (or `finished`), fires host uevents, then tells the listener to stop. */
async function fireWhenBound(dir: string, finished: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !existsSync(join(dir, "bound")) && !finished(); i++) await sleep(25);
  if (existsSync(join(dir, "bound"))) for (let i = 0; i < 5; i++) writeFileSync(TRIGGER, "change");
  await sleep(300);
  writeFileSync(join(dir, "done"), "");
}

/** The same listener on the host in a fresh network namespace of host root (owned by the initial
 * user namespace): what the lease would hear without its own netns owner. */
async function hostControl(): Promise<string> {
  const dir = makeWorkdir();
  try {
    const child = spawn("unshare", ["-n", "python3", "-c", listener, dir], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    let done = false;
    child.stdout.on("data", (b: Buffer) => { out += b.toString(); });
    const exited = new Promise<void>((res) => child.on("close", () => { done = true; res(); }));
    await fireWhenBound(dir, () => done);
    await exited;
    return out;
  } finally { removeWorkdir(dir); }
}

describe("network namespace ownership", () => {
  it("the lease's netns is not owned by the host's user namespace (NS_GET_USERNS from the host; and the read-back says so)", async () => {
    // From the host (root, initial user namespace) on the workload's own process: the workload
    // itself cannot ask, NS_GET_USERNS refuses an owner that is not its own namespace or below.
    const marker = `${process.pid}.${Date.now() % 100000}`;
    let done = false;
    const p = launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", `while [ ! -e /work/stop ]; do sleep 0.05; done; echo ${marker}`], timeout_ms: 30_000 })
      .finally(() => { done = true; });
    const owner = `
import fcntl, os, sys
want = sys.argv[1]
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
    except OSError:
        continue
    if cmd[:2] == [b"/bin/sh", b"-c"] and want.encode() in cmd[2]:
        fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        u = fcntl.ioctl(fd, 0xb701)  # NS_GET_USERNS
        print(os.fstat(u).st_ino, os.stat("/proc/self/ns/user").st_ino)
        break
`;
    let seen = "";
    for (let i = 0; i < 400 && !seen && !done; i++) {
      seen = execFileSync("python3", ["-c", owner, marker], { encoding: "utf8" }).trim();
      if (!seen) await sleep(25);
    }
    writeFileSync(join(wd, "stop"), "");
    const r = await p;
    expect(r.stdout.toString()).toBe(`${marker}\n`);
    const [netOwner, hostUserns] = seen.split(" ");
    expect(hostUserns).toBe(String(statSync("/proc/self/ns/user").ino));
    expect(netOwner).toMatch(/^\d+$/);
    expect(netOwner).not.toBe(hostUserns);
    expect(r.enforcement.netns_owner_init).toBe(false);
  });
  // AF_INET is open to a lease only when its policy lists TCP ports (seccomp's family allow-list); one listed port is enough here.
  it("loopback is still up in the lease's network namespace: a UDP datagram to 127.0.0.1 comes back (a lease with AF_INET allowed)", async () => {
    const py = "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0)); s.sendto(b'ping', s.getsockname()); s.settimeout(5); print(s.recv(10).decode())";
    const r = await launch({ ...basePolicy(wd), argv: ["/usr/bin/python3", "-c", py], landlock: { tcp_connect: [9] } });
    expect(r.stderr.toString()).toBe("");
    expect(r.stdout.toString()).toBe("ping\n");
  });
  it.skipIf(!existsSync(TRIGGER))(`hostile: a NETLINK_KOBJECT_UEVENT socket in a lease hears no host uevent written to ${TRIGGER} (or cannot be opened), where one in a root-owned netns on the host does`, async () => {
    expect(await hostControl()).toMatch(/^HEARD [1-9]\d*\n$/);
    let done = false;
    const p = launch({ ...basePolicy(wd), argv: ["/usr/bin/python3", "-c", listener, "/work"], timeout_ms: 40_000 })
      .finally(() => { done = true; });
    await fireWhenBound(wd, () => done);
    const r: LaunchResult = await p;
    expect(r.stdout.toString()).toMatch(/^(HEARD 0|SOCKET (EAFNOSUPPORT|EPERM|EACCES))\n$/);
  }, 60_000);
});
