// The egress network path of a lease, on the real kernel: one veth pair per
// lease (lh<N> on the host, eth0 inside), addresses from the lease pool,
// forwarding on the host end only, /etc/hosts from the policy, no nameserver.
// The only server reached is one this test creates: a network namespace of
// its own joined to the host by a veth the test makes, with its own subnet,
// IPv4 (and IPv6) forwarding on the test's host-end interface only and a route
// back to the lease pool. Everything is removed afterwards, also on failure.
// Every egress lease here runs under its BPF allow-list (an egress lease
// never starts without it): allowed address:port pairs get their echo, a
// port or address outside the list is EPERM and recorded.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HELPER_PATH, launch, sweepStaleLeases, type LaunchResult, type SandboxPolicyInput } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";
import { probeTier } from "./bpf-helpers";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const client = readFileSync(join(here, "workloads", "egress_client.py"), "utf8");

// Names and subnets of this run's own server namespace (pid-derived, so
// parallel checkouts do not collide). 198.18.0.0/15 is the benchmarking
// range, never routed on a real network; the ULA is the test's own.
const tag = process.pid % 100_000;
const NS = `leasehold-egress-${tag}`;
const HOST_IF = `lt${tag}h`;
const NS_IF = "srv0";
const NET4 = `198.18.${(process.pid % 200) + 20}`;
const HOST4 = `${NET4}.1`;
const SRV4 = `${NET4}.2`;
const NET6 = `fd6c:6874:${(process.pid & 0xffff).toString(16)}:1`;
const HOST6 = `${NET6}::1`;
const SRV6 = `${NET6}::2`;
const TCP_PORT = 7007;
const UDP_PORT = 7007;
const NAME = "echo.egress.test";
// IPv6 forwards per input interface only with force_forwarding (Linux 6.17);
// without it the lease's IPv6 stops at the host end (the operator's global setting).
const FF6 = existsSync("/proc/sys/net/ipv6/conf/all/force_forwarding");
// Egress needs BPF tier A or B: on a tier C host these fail, unless the kernel
// itself lacks the program types (then the titles name the skip).
const { status: bpf, skip } = probeTier();
const title = (t: string) => (skip ? `${t} — skipped: ${skip}` : t);

const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
const inNs = (...args: string[]) => ip("netns", "exec", NS, ...args);
const sysctl = (path: string) => readFileSync(`/proc/sys/${path}`, "utf8").trim();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const linkExists = (name: string) => {
  try { ip("link", "show", "dev", name); return true; } catch { return false; }
};

let wd = "";
let server: ChildProcess | undefined;
const globalBefore = { v4: "", v6: "" };

function teardown(): void {
  server?.stdin?.end();
  server?.kill("SIGKILL");
  // Deleting the namespace deletes srv0 and with it its peer on the host.
  try { ip("netns", "del", NS); } catch { /* not created */ }
  try { ip("link", "del", HOST_IF); } catch { /* gone with the namespace */ }
}

beforeAll(async () => {
  setupNative();
  wd = makeWorkdir();
  globalBefore.v4 = sysctl("net/ipv4/ip_forward");
  globalBefore.v6 = sysctl("net/ipv6/conf/all/forwarding");
  teardown(); // a previous run of this pid that died mid-way
  try {
    ip("netns", "add", NS);
    ip("link", "add", HOST_IF, "type", "veth", "peer", "name", NS_IF, "netns", NS);
    ip("addr", "add", `${HOST4}/24`, "dev", HOST_IF);
    ip("-6", "addr", "add", `${HOST6}/64`, "dev", HOST_IF, "nodad");
    ip("link", "set", HOST_IF, "up");
    // Replies from the server come in on the test's interface: it forwards, nothing else.
    writeFileSync(`/proc/sys/net/ipv4/conf/${HOST_IF}/forwarding`, "1");
    if (FF6) writeFileSync(`/proc/sys/net/ipv6/conf/${HOST_IF}/force_forwarding`, "1");
    inNs("ip", "link", "set", "lo", "up");
    inNs("ip", "addr", "add", `${SRV4}/24`, "dev", NS_IF);
    inNs("ip", "-6", "addr", "add", `${SRV6}/64`, "dev", NS_IF, "nodad");
    inNs("ip", "link", "set", NS_IF, "up");
    inNs("ip", "route", "add", "100.127.0.0/16", "via", HOST4);
    inNs("ip", "-6", "route", "add", "fda6:8807:ab0f::/48", "via", HOST6);
    server = spawn("ip", ["netns", "exec", NS, process.execPath, join(here, "workloads", "echo_server.mjs"), `${TCP_PORT},7008`, String(UDP_PORT)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      let out = "";
      server?.stdout?.on("data", (b: Buffer) => { out += b.toString(); if (out.includes("ready")) resolve(); });
      server?.on("exit", (c) => reject(new Error(`echo server exited (${c})`)));
      setTimeout(() => reject(new Error("echo server not ready in 10 s")), 10_000);
    });
  } catch (e) {
    teardown();
    throw e;
  }
});

afterAll(() => {
  teardown();
  if (wd) removeWorkdir(wd);
  expect(existsSync(`/run/netns/${NS}`)).toBe(false);
  expect(linkExists(HOST_IF)).toBe(false);
});

type Outcome = { ok: true; result: Omit<LaunchResult, "stdout" | "stderr"> & { stdout: string; stderr: string } } | { ok: false; error: { code: string | null; message: string } };
/** Runs one launch in a child process (an agent the test can kill); `child` sees the process. */
function runInChild(policy: SandboxPolicyInput, child: (p: ChildProcess) => void): Promise<Outcome[]> {
  const p = spawn(process.execPath, ["--import", "tsx", join(here, "fixtures", "egress-launch.ts"), JSON.stringify({ runs: [policy] })], {
    cwd: root, stdio: ["ignore", "pipe", "inherit"],
  });
  child(p);
  let out = "";
  p.stdout.on("data", (b: Buffer) => { out += b.toString(); });
  return new Promise((resolve, reject) => {
    p.on("close", (code, signal) => {
      const last = out.trim().split("\n").pop() ?? "";
      if (code === 0 && last) resolve(JSON.parse(last) as Outcome[]);
      else reject(new Error(`egress fixture ended ${code ?? signal}: ${out}`));
    });
  });
}
const text = (r: LaunchResult) => ({ ...r, stdout: r.stdout.toString(), stderr: r.stderr.toString() });

const hosts = [{ name: NAME, addresses: [SRV4, SRV6] }];
const egressPolicy = (argv: string[], extra: Partial<SandboxPolicyInput> = {}): SandboxPolicyInput => ({
  ...basePolicy(wd),
  argv,
  timeout_ms: 30_000,
  network: { egress: [`${SRV4}/32:${TCP_PORT}`, `[${SRV6}/128]:${TCP_PORT}`], hosts },
  ...extra,
});
const probes = (...p: string[]) => ["/usr/bin/python3", "-c", client, ...p];
/** The pool plan (native/README.md): slot N → 100.127.0.0 + 4N (/30) and fda6:8807:ab0f:N::/126, in canonical text. */
const plan4 = (slot: number, host: number) => `100.127.${slot >> 6}.${((slot & 63) << 2) + host}`;
const plan6 = (slot: number, host: number) => (slot === 0 ? `fda6:8807:ab0f::${host}` : `fda6:8807:ab0f:${slot.toString(16)}::${host}`);
/** The lease's pool slot from its IPv4 address: 100.127.0.0 + 4 * slot + 2. */
const slotOf = (addr: string) => {
  const [a, b, c, d] = addr.split("/")[0]!.split(".").map(Number);
  expect([a, b]).toEqual([100, 127]);
  return ((c! << 8) + d! - 2) / 4;
};

describe("egress lease network path (veth per lease, under the BPF allow-list)", () => {
  it.skipIf(skip !== "")(title("reaches a TCP and a UDP echo server by name over IPv4; the lease's addresses, gateway and host end follow the pool plan"), async () => {
    const r = text(await launch(egressPolicy(probes(`4 tcp ${NAME} ${TCP_PORT}`, `4 udp ${NAME} ${UDP_PORT}`))));
    console.log(`[egress] IPv4 probes: ${r.stdout.trim().replace(/\n/g, " | ")}; network ${JSON.stringify(r.network)}`);
    expect(r.exit.code).toBe(0);
    expect(r.stdout.split("\n").filter(Boolean)).toEqual([`OK tcp4 ${SRV4} echo:hi-tcp4`, `OK udp4 ${SRV4} echo:hi-udp4`]);
    const n = r.network!;
    expect(n.guard).toBe("bpf");
    expect(r.bpf).toMatchObject({ tier: bpf.tier, enforced: true, denials: [] });
    const slot = slotOf(n.ipv4.address);
    expect(Number.isInteger(slot) && slot >= 0 && slot < 16384).toBe(true);
    expect(n.host_interface).toBe(`lh${slot}`);
    expect(n.ipv4).toEqual({ address: `${plan4(slot, 2)}/30`, gateway: plan4(slot, 1) });
    expect(n.ipv6).toEqual({ address: `${plan6(slot, 2)}/126`, gateway: plan6(slot, 1) });
    expect(n.forwarding).toEqual({ ipv4: true, ipv6: FF6 });
    expect(n.hosts).toEqual(hosts);
    expect(r.enforcement.namespaces).toContain("net");
    expect(r.enforcement.netns_owner_init).toBe(false);
  });

  it.skipIf(!FF6 || skip !== "")(title(FF6 ? "reaches the TCP and UDP echo servers by name over IPv6 (per-interface force_forwarding on the host end)"
    : "IPv6 egress beyond the host end — skipped: this kernel has no per-interface IPv6 forwarding (force_forwarding, Linux 6.17)"), async () => {
    const r = text(await launch(egressPolicy(probes(`6 tcp ${NAME} ${TCP_PORT}`, `6 udp ${NAME} ${UDP_PORT}`))));
    console.log(`[egress] IPv6 probes: ${r.stdout.trim().replace(/\n/g, " | ")}`);
    expect(r.stdout.split("\n").filter(Boolean)).toEqual([`OK tcp6 ${SRV6} echo:hi-tcp6`, `OK udp6 ${SRV6} echo:hi-udp6`]);
    expect(r.limitations.filter((l) => l.includes("IPv6"))).toEqual([]);
  });

  it.skipIf(skip !== "")(title("a port or address outside the allow-list is EPERM (TCP connect, UDP sendto, IPv4 and IPv6, also the host end) and each denial is recorded"), async () => {
    const r = text(await launch(egressPolicy(
      probes(`4 tcp ${NAME} 7008`, `4 udp ${NAME} 7009`, `6 tcp ${NAME} 7008`, `4 tcp @gateway ${TCP_PORT}`, `4 tcp ${NAME} ${TCP_PORT}`),
      { network: { egress: [`${SRV4}/32:${TCP_PORT}`, `[${SRV6}/128]:${TCP_PORT}`, `${SRV4}/32:${UDP_PORT}`], hosts } },
    )));
    console.log(`[egress] outside the allow-list: ${r.stdout.trim().replace(/\n/g, " | ")}`);
    expect(r.stdout.split("\n").filter(Boolean)).toEqual(["ERR tcp4 EPERM", "ERR udp4 EPERM", "ERR tcp6 EPERM", "ERR tcp4 EPERM", `OK tcp4 ${SRV4} echo:hi-tcp4`]);
    const denied = r.bpf.denials.map((d) => `${d.kind} ${d.protocol ?? "-"} ${d.address ?? "-"} ${d.port ?? "-"}`);
    expect(denied).toEqual(expect.arrayContaining([
      `connect tcp ${SRV4} 7008`, `sendmsg udp ${SRV4} 7009`, `connect tcp ${SRV6} 7008`, `connect tcp ${r.network!.ipv4.gateway} ${TCP_PORT}`,
    ]));
  });

  it.skipIf(skip !== "")(title("names resolve from the sandbox's read-only /etc/hosts only; /etc/resolv.conf names no nameserver"), async () => {
    const script = [
      "cat /etc/hosts", "echo ---", "cat /etc/resolv.conf", "echo ---",
      `getent ahostsv4 ${NAME} | head -1`, `getent ahostsv6 ${NAME} | head -1`,
      "getent hosts not-listed.egress.test; echo unlisted=$?",
      "echo x >> /etc/hosts 2>/dev/null; echo write_hosts=$?",
      "echo x >> /etc/resolv.conf 2>/dev/null; echo write_resolv=$?",
    ].join("; ");
    const r = text(await launch(egressPolicy(["/bin/sh", "-c", script])));
    const [hostsFile, resolv, rest] = r.stdout.split("---\n");
    expect(hostsFile).toBe(`127.0.0.1 localhost leasehold\n::1 localhost\n${SRV4} ${NAME}\n${SRV6} ${NAME}\n`);
    expect(resolv).not.toMatch(/^\s*nameserver/m);
    expect(rest).toMatch(new RegExp(`^${SRV4.replace(/\./g, "\\.")}\\s+STREAM ${NAME}$`, "m"));
    expect(rest).toMatch(new RegExp(`^${SRV6}\\s+STREAM ${NAME}$`, "m"));
    expect(rest).toContain("unlisted=2"); // not found: nothing but /etc/hosts answers
    expect(rest).toMatch(/write_hosts=[12]\n/); // read-only
    expect(rest).toMatch(/write_resolv=[12]\n/);
  });

  it.skipIf(skip !== "")(title("concurrent egress leases get distinct slots, interfaces and addresses, and each reaches the server"), async () => {
    const rs = (await Promise.all(Array.from({ length: 4 }, () => launch(egressPolicy(probes(`4 tcp ${NAME} ${TCP_PORT}`)))))).map(text);
    const ifs = rs.map((r) => r.network!.host_interface);
    console.log(`[egress] 4 concurrent leases: ${ifs.join(" ")}`);
    expect(new Set(ifs).size).toBe(4);
    expect(new Set(rs.map((r) => r.network!.ipv4.address)).size).toBe(4);
    for (const r of rs) expect(r.stdout.trim()).toBe(`OK tcp4 ${SRV4} echo:hi-tcp4`);
  });

  it.skipIf(skip !== "")(title("lh<N> exists on the host with the host-end address and forwarding only while the lease runs, global forwarding untouched; it is gone afterwards"), async () => {
    const addrFile = join(wd, `addr-${Date.now()}`);
    const inside = `/work/${addrFile.split("/").pop()!}`;
    const done = launch(egressPolicy(probes(`addr:${inside}`, `4 tcp ${NAME} ${TCP_PORT}`)));
    for (let i = 0; i < 400 && !existsSync(addrFile); i++) await sleep(25);
    const addr = readFileSync(addrFile, "utf8").trim();
    const slot = slotOf(addr);
    const lh = `lh${slot}`;
    const shown = JSON.parse(ip("-j", "addr", "show", "dev", lh)) as { operstate: string; addr_info: { local: string; prefixlen: number }[] }[];
    const during = {
      fwd4: sysctl(`net/ipv4/conf/${lh}/forwarding`), acceptRa: sysctl(`net/ipv6/conf/${lh}/accept_ra`),
      fwd6: FF6 ? sysctl(`net/ipv6/conf/${lh}/force_forwarding`) : "0",
      global4: sysctl("net/ipv4/ip_forward"), global6: sysctl("net/ipv6/conf/all/forwarding"),
    };
    writeFileSync(`${addrFile}.go`, "");
    const r = text(await done);
    expect(r.network!.host_interface).toBe(lh);
    expect(shown[0]!.addr_info.map((a) => `${a.local}/${a.prefixlen}`)).toEqual(expect.arrayContaining([
      `${plan4(slot, 1)}/30`, `${plan6(slot, 1)}/126`,
    ]));
    expect(during).toEqual({ fwd4: "1", acceptRa: "0", fwd6: FF6 ? "1" : "0", global4: globalBefore.v4, global6: globalBefore.v6 });
    expect(r.stdout.trim()).toBe(`OK tcp4 ${SRV4} echo:hi-tcp4`);
    // The namespace is freed asynchronously after its last process: wait briefly.
    for (let i = 0; i < 100 && linkExists(lh); i++) await sleep(50);
    expect(linkExists(lh)).toBe(false);
    expect(sysctl("net/ipv4/ip_forward")).toBe(globalBefore.v4);
    expect(sysctl("net/ipv6/conf/all/forwarding")).toBe(globalBefore.v6);
    rmSync(addrFile, { force: true });
    rmSync(`${addrFile}.go`, { force: true });
  });

  it.skipIf(skip !== "")(title("a launching process killed mid-lease (SIGKILL) leaves no lh* interface behind"), async () => {
    const addrFile = join(wd, `crash-${Date.now()}`);
    const inside = `/work/${addrFile.split("/").pop()!}`;
    let child: ChildProcess | undefined;
    const done = runInChild(egressPolicy(probes(`addr:${inside}`, `4 tcp ${NAME} ${TCP_PORT}`)), (p) => { child = p; });
    const settled = done.then(() => "exited", () => "killed");
    for (let i = 0; i < 400 && !existsSync(addrFile); i++) await sleep(25);
    const lh = `lh${slotOf(readFileSync(addrFile, "utf8").trim())}`;
    expect(linkExists(lh)).toBe(true);
    child!.kill("SIGKILL");
    expect(await settled).toBe("killed");
    for (let i = 0; i < 100 && linkExists(lh); i++) await sleep(50);
    expect(linkExists(lh)).toBe(false);
    // Its cgroups are the sweep's (owner dead); the interface needed no sweep.
    const sweep = sweepStaleLeases();
    expect(sweep.failures).toEqual([]);
    rmSync(addrFile, { force: true });
  });
});

describe("egress is fail-closed without its kernel allow-list", () => {
  it("launch.c refuses an egress config whose BPF allow-list is not attached, before spawning anything (addon called directly)", async () => {
    const addon = createRequire(import.meta.url)(join(root, "native", "build", "Release", "leasehold_native.node")) as {
      launch(req: Record<string, unknown>): Promise<{ failed: boolean; failStage: string; failErrno: number; failMessage: string; sandboxPid: number; cgroup: { withdrawnRemoved: boolean } }>;
    };
    const marker = `ran-${Date.now()}`;
    const config = Buffer.concat([
      ["uid", "1610612999"], ["gid", "1610612999"], ["workdir", wd], ["net", "egress"], ["arg", "/bin/sh"], ["arg", "-c"], ["arg", `touch /work/${marker}`],
    ].map(([k, v]) => Buffer.from(`${k}\0${v}\0`)));
    const r = await addon.launch({
      helper: HELPER_PATH, leaseId: `egressgate${process.pid}`, config, stdin: Buffer.alloc(0), stdoutMax: 1024, stderrMax: 1024,
      timeoutMs: 5000, memoryBytes: 64 << 20, pidsMax: 16, cpuQuotaUs: 100_000, cpuPeriodUs: 100_000, progressEveryMs: 1000,
      netEgress: true, // and no `bpf` request
    });
    expect(r).toMatchObject({ failed: true, failStage: "network", failErrno: 1, sandboxPid: 0 });
    expect(r.failMessage).toMatch(/without its BPF allow-list/);
    expect(r.cgroup.withdrawnRemoved).toBe(true);
    expect(existsSync(join(wd, marker))).toBe(false);
  });

  it("the helper itself refuses an egress config without net_guard, a net_guard not last, an unknown net value and bad hosts lines (nothing spawned)", () => {
    const status = (records: [string, string][]) => {
      const cfg = Buffer.concat(records.map(([k, v]) => Buffer.from(`${k}\0${v}\0`)));
      // fd 3 = config, fd 4 = status (protocol.h); each case fails before any cgroup or namespace.
      try {
        return execFileSync("/bin/sh", ["-c", 'exec "$0" 3<&0 4>&1 </dev/null', HELPER_PATH], { input: cfg, encoding: "utf8" });
      } catch (e) { return String((e as { stdout?: string }).stdout ?? ""); }
    };
    const base: [string, string][] = [["uid", "1234567"], ["gid", "1234567"], ["workdir", wd], ["arg", "/bin/true"]];
    expect(status([...base, ["net", "egress"]])).toMatch(/^E network 1 egress lease without its kernel allow-list/);
    expect(status([...base, ["net", "egress"], ["net_guard", "bpf"], ["cg2", "/x"]])).toMatch(/^E config 22 net_guard: only launch.c's/);
    expect(status([...base, ["net", "host"]])).toMatch(/^E config 22 net\n/);
    expect(status([...base, ["net", "egress"], ["host", "10.0.0.1 bad_name"], ["net_guard", "bpf"]])).toMatch(/^E config 22 host/);
    expect(status([...base, ["net", "egress"], ["host", "10.0.0.1x ok.test"], ["net_guard", "bpf"]])).toMatch(/^E config 22 host/);
    expect(status([...base, ["net", "egress"], ["host", "FD00::1 ok.test"], ["net_guard", "bpf"]])).toMatch(/^E config 22 host/);
    expect(status([...base, ["net", "egress"], ["host", "10.0.0.1 ok.test other.test"], ["net_guard", "bpf"]])).toMatch(/^E config 22 host/);
    expect(status([...base, ["net", "egress"], ["host", "10.0.0.1 ok.test\n10.6.6.6 evil.test"], ["net_guard", "bpf"]])).toMatch(/^E config 22 host/);
    expect(status([...base, ["host", "10.0.0.1 ok.test"]])).toMatch(/^E config 22 net_guard\/host records need net egress/);
  });
});
