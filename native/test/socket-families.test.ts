// Socket families: a lease may open AF_UNIX, and AF_INET/AF_INET6 only when
// its policy needs TCP on its own loopback (Landlock tcp_connect/tcp_bind
// ports); every other family number is refused with EAFNOSUPPORT by seccomp.
// The survey runs the same probe on the host first (as root), so the table
// shows what the kernel itself would have opened.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROBE, makeWorkdir, probe, removeWorkdir, setupNative } from "./helpers";

interface Row { fam: number; name: string; socket: string; pair: string }
function parseSurvey(out: string): Row[] {
  return out.trim().split("\n").map((l) => {
    const [fam, name, socket, pair] = l.split(" ");
    return { fam: Number(fam), name: name ?? "", socket: socket ?? "", pair: pair ?? "" };
  });
}

const AF_UNIX = 1, AF_INET = 2, AF_INET6 = 10;
let wd = "";
let host: Row[] = [];
let noInet: Row[] = [];
let withInet: Row[] = [];

beforeAll(async () => {
  setupNative();
  wd = makeWorkdir();
  host = parseSurvey(execFileSync(PROBE, ["sock_survey"], { encoding: "utf8" }));
  noInet = parseSurvey((await probe(wd, "sock_survey")).stdout.toString());
  withInet = parseSurvey((await probe(wd, "sock_survey", "", { landlock: { tcp_connect: [9] } })).stdout.toString());
});
afterAll(() => {
  const pad = (s: string, n: number) => s.padEnd(n);
  const lines = [
    `| fam | name | host socket() | host socketpair() | lease socket() | lease socketpair() | lease+tcp ports socket() | lease+tcp ports socketpair() |`,
    `|---|---|---|---|---|---|---|---|`,
    ...host.map((h, i) => `| ${h.fam} | ${pad(h.name, 13)} | ${h.socket} | ${h.pair} | ${noInet[i]?.socket ?? "?"} | ${noInet[i]?.pair ?? "?"} | ${withInet[i]?.socket ?? "?"} | ${withInet[i]?.pair ?? "?"} |`),
  ];
  console.log(`[socket family survey] (OK = some type opened; else the errnos seen for STREAM/DGRAM/RAW/SEQPACKET)\n${lines.join("\n")}`);
  removeWorkdir(wd);
});

describe("socket family allow-list (seccomp)", () => {
  it("the survey covers family numbers 0–45 on the host and in both leases", () => {
    for (const rows of [host, noInet, withInet]) expect(rows.map((r) => r.fam)).toEqual([...Array(46).keys()]);
    // The host opens more than the allow-list (here at least NETLINK, PACKET and
    // INET as root); if it opened only AF_UNIX the survey would prove nothing.
    expect(host.filter((r) => r.socket === "OK").length).toBeGreaterThan(1);
  });
  it("without TCP ports in the policy only AF_UNIX opens; every other family is EAFNOSUPPORT", () => {
    for (const r of noInet) {
      if (r.fam === AF_UNIX) {
        expect([r.socket, r.pair]).toEqual(["OK", "OK"]);
      } else {
        expect({ fam: r.name, socket: r.socket, pair: r.pair }).toEqual({ fam: r.name, socket: "EAFNOSUPPORT", pair: "EAFNOSUPPORT" });
      }
    }
  });
  it("with tcp_connect ports listed, AF_INET and AF_INET6 open as well, and nothing else", () => {
    for (const r of withInet) {
      if (r.fam === AF_UNIX) expect([r.socket, r.pair]).toEqual(["OK", "OK"]);
      else if (r.fam === AF_INET || r.fam === AF_INET6) {
        expect(r.socket).toBe("OK");
        // socketpair() of an inet family is the kernel's own refusal, as on the host
        expect(r.pair).toBe(host[r.fam]?.pair);
      } else {
        expect({ fam: r.name, socket: r.socket, pair: r.pair }).toEqual({ fam: r.name, socket: "EAFNOSUPPORT", pair: "EAFNOSUPPORT" });
      }
    }
  });
  it("a family number with the upper 32 bits set (ignored by the kernel) is refused too", async () => {
    const h = execFileSync(PROBE, ["vsock_hibits"], { encoding: "utf8" }).trim();
    const r = await probe(wd, "vsock_hibits");
    // On the host the kernel truncates the domain to int: AF_VSOCK (where the
    // kernel has it) or EAFNOSUPPORT (where it has not).
    expect(["OK", "ERR EAFNOSUPPORT"]).toContain(h);
    expect(r.stdout.toString().trim()).toBe("ERR EAFNOSUPPORT");
  });
});
