// The egress allow-list hooks with processes placed directly in a throwaway
// lease cgroup (not through the sandbox), inside a network namespace this
// test creates (`unshare -n`: it disappears with the process, also on
// failure) with 10.77.0.1-2 and fd00::1-2 on its loopback. An allowed
// destination gets past the hook; every other one gets EPERM and an event.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addBpfLease, launch, type BpfDenial, type BpfLeaseHandle } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir } from "./helpers";
import { makeTestCgroup, probeTier } from "./bpf-helpers";

const here = dirname(fileURLToPath(import.meta.url));
const PROBE = join(here, "workloads", "bpf_net_probe.py");
const { status, skip } = probeTier();
const title = (t: string) => (skip ? `${t} — skipped: ${skip}` : t);
const EGRESS = ["10.77.0.0/31:8080", "10.77.0.1/32:5353", "[fd00::/127]:8080", "[fd00::/127]:5353"];

/** Runs the probe in a fresh netns; joins `cgroup` (its cgroup.procs) first when given. */
function runProbe(cgroup: string | null): Record<string, string> {
  const netSetup = [
    "ip link set lo up", "ip addr add 10.77.0.1/32 dev lo", "ip addr add 10.77.0.2/32 dev lo",
    "ip -6 addr add fd00::1/128 dev lo nodad", "ip -6 addr add fd00::2/128 dev lo nodad",
    // ICMP "ping" sockets for every group in this netns only: otherwise the kernel refuses them
    // (EACCES) before the socket-create hook is reached, and the hook would go untested.
    "echo \"0 2147483647\" > /proc/sys/net/ipv4/ping_group_range", `exec /usr/bin/python3 ${PROBE}`,
  ].join(" && ");
  const join_ = cgroup ? `echo 0 > ${cgroup}/cgroup.procs && ` : "";
  const out = execFileSync("/bin/sh", ["-c", `${join_}exec unshare -n /bin/sh -c '${netSetup}'`], { encoding: "utf8", timeout: 30_000 });
  return JSON.parse(out) as Record<string, string>;
}

const REFUSED = ["tcp4_other_port", "tcp4_other_addr", "udp4_other", "udp4_connect_other", "tcp6_other", "udp6_other", "mapped_other", "raw", "ping"];
const ALLOWED = ["tcp4_allowed", "udp4_allowed", "tcp6_allowed", "udp6_allowed", "mapped_allowed"];

/** Runs `fn` with the test cgroup under the egress lease; withdraws (the probe has exited) whatever happens. */
function underLease<T>(fn: () => T): { r: T; w: ReturnType<BpfLeaseHandle["withdraw"]> } {
  const lease = addBpfLease(cg!.lease, { egress: EGRESS });
  let r: T;
  try { r = fn(); } catch (e) { lease.withdraw(); throw e; }
  return { r, w: lease.withdraw() };
}

let cg: ReturnType<typeof makeTestCgroup> | null = null;
beforeAll(() => { if (!skip) cg = makeTestCgroup("net"); });
afterAll(() => cg?.remove());

function expectDenials(denials: BpfDenial[]): void {
  const net = (kind: string, address: string, port: number, protocol: string, family: number) =>
    expect(denials).toContainEqual(expect.objectContaining({ kind, address, port, protocol, family }));
  net("connect", "10.77.0.1", 8081, "tcp", 4);
  net("connect", "10.77.0.2", 8080, "tcp", 4);
  net("sendmsg", "10.77.0.2", 5353, "udp", 4);
  net("connect", "10.77.0.2", 5353, "udp", 4);
  net("connect", "fd00::2", 8080, "tcp", 6);
  net("sendmsg", "fd00::2", 5353, "udp", 6);
  // The IPv4-mapped destination is judged (and recorded) as the IPv4 address it reaches.
  expect(denials.filter((d) => d.kind === "connect" && d.address === "10.77.0.2" && d.port === 8080)).toHaveLength(2);
  expect(denials).toContainEqual(expect.objectContaining({ kind: "socket", family: 2, socket_type: 3, socket_protocol: 1 }));
  expect(denials).toContainEqual(expect.objectContaining({ kind: "socket", family: 2, socket_type: 2, socket_protocol: 1 }));
  expect(denials).toHaveLength(REFUSED.length);
  for (const d of denials) expect(d.comm).toBe("python3");
}

describe("BPF egress allow-list (process placed in a lease cgroup, test-created netns)", () => {
  it(title("this host enforces tier A or B (a tier C host fails here with the reason)"), () => {
    if (skip) return;
    expect(status.tier, status.detail).toMatch(/^[AB]$/);
  });

  it.skipIf(skip !== "")(title("TCP, UDP and IPv6: allowed destinations pass the hook, the others get EPERM; raw and ping sockets are refused; every denial is recorded"), () => {
    const { r, w } = underLease(() => runProbe(cg!.lease));
    for (const c of ALLOWED) expect([c, r[c]]).toEqual([c, "ok"]);
    for (const c of REFUSED) expect([c, r[c]]).toEqual([c, "EPERM"]);
    expect(w.dropped).toBe(0);
    expectDenials(w.denials);
  });

  it.skipIf(skip !== "")(title("a process in a cgroup nested below the lease is still in the lease"), () => {
    const nested = join(cg!.lease, "nested");
    execFileSync("mkdir", ["-p", nested]);
    const { r, w } = underLease(() => runProbe(nested));
    for (const c of ALLOWED) expect([c, r[c]]).toEqual([c, "ok"]);
    for (const c of REFUSED) expect([c, r[c]]).toEqual([c, "EPERM"]);
    expectDenials(w.denials);
  });

  it.skipIf(skip !== "")(title("a process outside the lease is unaffected while the lease is live"), () => {
    const { r, w } = underLease(() => runProbe(null));
    for (const c of [...ALLOWED, ...REFUSED]) expect([c, r[c]]).not.toEqual([c, "EPERM"]);
    expect(r["tcp4_other_addr"]).toBe("ECONNREFUSED");
    expect(r["udp4_other"]).toBe("ok");
    expect(r["raw"]).toBe("ok");
    expect(r["ping"]).toBe("ok");
    expect(w.denials).toEqual([]);
  });

  it.skipIf(skip !== "")(title("through launch(): an egress lease's denied destination (other port, or other address) gets EPERM and is in result.bpf; an allowed one gets past the hook"), async () => {
    const wd = makeWorkdir();
    try {
      // An egress lease has a routed network path (a veth to the host, which forwards): the allowed
      // destination is the lease's own loopback, so nothing leaves its namespace. Past the hook it
      // gets ECONNREFUSED (nothing listens there); a denied one gets EPERM from the hook.
      const py = [
        "import socket, errno",
        "def t(a, p):",
        "    s = socket.socket(); s.settimeout(2)",
        "    try: s.connect((a, p)); return 'ok'",
        "    except OSError as e: return errno.errorcode[e.errno]",
        "print(t('127.0.0.1', 443), t('127.0.0.1', 444), t('198.51.100.7', 443))",
      ].join("\n");
      const r = await launch({
        ...basePolicy(wd), argv: ["/usr/bin/python3", "-c", py], network: { egress: ["127.0.0.1/32:443"] },
        // No Landlock ports: an egress lease's TCP connects are the BPF hook's alone (landlock.c).
      });
      expect(r.stderr.toString()).toBe("");
      const [allowed, otherPort, otherAddr] = r.stdout.toString().trim().split(" ");
      expect(allowed).toBe("ECONNREFUSED");
      expect([otherPort, otherAddr]).toEqual(["EPERM", "EPERM"]);
      expect(r.bpf.enforced).toBe(true);
      expect(r.bpf.denials).toEqual([
        expect.objectContaining({ kind: "connect", address: "127.0.0.1", port: 444, protocol: "tcp", family: 4 }),
        expect.objectContaining({ kind: "connect", address: "198.51.100.7", port: 443, protocol: "tcp", family: 4 }),
      ]);
    } finally { removeWorkdir(wd); }
  });
});
