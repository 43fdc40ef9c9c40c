// The lease allow-list driver (driver.c, the same static binary the VM test
// boots) run natively through the C API, no VM: a cross-check of tier B on
// this machine's own kernel, and of detection's answer here. Needs root
// (BPF, cgroup directories, a network namespace of the driver's own).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBpfDriver } from "./build.mjs";

const CHECKS = [
  "detect", "lease_add", "exec_allowed", "exec_denied", "exec_dynamic", "exec_ldso", "exec_nested",
  "tcp4_allowed", "tcp4_denied", "udp4_allowed", "udp4_denied", "udp4_connect_denied",
  "tcp6_allowed", "tcp6_denied", "udp6_allowed", "udp6_denied", "mapped_denied", "raw", "outside", "events",
];

let dir = "";
let built: ReturnType<typeof buildBpfDriver>;

function runDriver(args: string[]): { lines: string[]; checks: Map<string, string> } {
  let out: string;
  try {
    out = execFileSync(built.driver, [...args, "--ldso", built.ldso, "--dynamic", built.ran, "--dir", dir], { encoding: "utf8", timeout: 60_000 });
  } catch (e) {
    out = String((e as { stdout?: string }).stdout ?? e);
  }
  const lines = out.split("\n").filter((l) => l.startsWith("LH-VM"));
  console.log(`[native bpf] lh-bpf-driver ${args.join(" ")}\n${lines.join("\n")}`);
  return { lines, checks: new Map(lines.filter((l) => l.startsWith("LH-VM ")).map((l) => [l.split(" ")[1] ?? "", l])) };
}

describe("lease allow-list driver natively (C API, no VM)", () => {
  beforeAll(() => {
    if (process.getuid?.() !== 0) throw new Error("[native bpf] the driver needs root (BPF programs, cgroup directories, a network namespace): run the tests as root");
    dir = mkdtempSync(join(tmpdir(), "leasehold-bpf-driver-"));
    built = buildBpfDriver(dir);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("tier B (max tier B): disallowed exec, ld.so and nested cgroup killed with SIGKILL, TCP/UDP/IPv6/v4-mapped egress and inet raw sockets refused with EPERM, each one event; allowed ones and an outside process unaffected", () => {
    const { lines, checks } = runDriver(["--max-tier", "B", "--expect-tier", "B"]);
    for (const check of CHECKS) expect(checks.get(check) ?? `LH-VM ${check} missing`).toMatch(new RegExp(`^LH-VM ${check} PASS`));
    expect(lines).toContain(`LH-VM-RESULT PASS ${CHECKS.length}/${CHECKS.length} tier=B`);
    expect(checks.get("detect")).toMatch(/tier=B expected=B object_sha256=[0-9a-f]{64} /);
    expect(checks.get("exec_denied")).toMatch(/: signal=KILL /);
    expect(checks.get("exec_ldso")).toMatch(/in lease signal=KILL .* outside ran/);
    expect(checks.get("events")).toMatch(/exec=3 connect=4 sendmsg=2 socket=2 file=0 dropped=0 .*strays=0$/);
  });

  it("unrestricted detection: the strongest tier this kernel enforces (A or B), with the reason when A is refused, and its checks pass", () => {
    const { lines, checks } = runDriver([]);
    const tier = /tier=([ABC]) /.exec(checks.get("detect") ?? "")?.[1];
    expect(tier === "A" || tier === "B", checks.get("detect")).toBe(true);
    if (tier === "B") expect(checks.get("detect")).toMatch(/tier A refused: /);
    expect(lines).toContain(`LH-VM-RESULT PASS ${CHECKS.length}/${CHECKS.length} tier=${tier}`);
  });
});
