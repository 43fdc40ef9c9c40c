import { describe, expect, it } from "vitest";
import { buildLaunchEvidence } from "../trust/evidence";
import { networkEvidence } from "./evidence";

/** The action page's view of an envelope's kernel side: tier, object, resolved names, one line per denial. */
const readback = {
  exit: { code: 0, signal: null, timed_out: false, oom_killed: false, pids_exhausted: false },
  timing: { started_at: "2026-01-01T00:00:00.000Z", ended_at: "2026-01-01T00:00:01.000Z", wall_ms: 1000, setup_ms: 10, cpu_ms: 5 },
  enforcement: {
    namespaces: ["user", "mnt", "pid", "net"],
    uid: { inside: 0, host: 1 },
    gid: { inside: 0, host: 1 },
    cgroup: { hierarchy: "v1", memory_max: 1 << 28, memsw_max: null, pids_max: 64, cpu_quota_us: 100000, cpu_period_us: 100000, cgroup_id: 1 },
    seccomp: true,
    seccomp_filters: 1,
    landlock_abi: 6,
    no_new_privs: true,
    cap_effective: "0",
    cap_bounding: "0",
  },
  limitations: [],
} as unknown as Parameters<typeof buildLaunchEvidence>[0]["launch"];

describe("networkEvidence", () => {
  it("lists each denial as one line with the destination, and the names the guest resolved", () => {
    const envelope = buildLaunchEvidence({
      action_id: "a",
      action_hash: `sha256:${"1".repeat(64)}`,
      host_id: "h",
      producer: { capability: "egress-shell", version: "1.0.0" },
      launch: readback,
      bpf: {
        tier: "B",
        attached: true,
        object_sha256: "ab".repeat(32),
        denials: [
          { kind: "connect", pid: 7, comm: "python3", address: "198.19.20.2", port: 7108, protocol: "tcp", family: 4 },
          { kind: "sendmsg", pid: 7, comm: "python3", address: "2001:db8::1", port: 53, protocol: "udp", family: 6 },
          { kind: "socket", pid: 8, comm: "ping", family: 2, socket_type: 3, socket_protocol: 1 },
        ],
        denials_dropped: 2,
      },
      artifacts: [],
      redactions: { count: 0, kinds: [] },
      resolvedNames: [{ name: "echo.test", addresses: ["198.19.20.2"] }],
    });
    expect(networkEvidence(envelope)).toEqual({
      tier: "B",
      attached: true,
      object_sha256: "ab".repeat(32),
      denials: ["connect tcp 198.19.20.2:7108 refused (pid 7, python3)", "sendmsg udp [2001:db8::1]:53 refused (pid 7, python3)", "socket family 2 refused (pid 8, ping)"],
      denials_dropped: 2,
      resolved_names: [{ name: "echo.test", addresses: ["198.19.20.2"] }],
    });
  });

  it("an envelope outside the schema or without a BPF section shows nothing rather than a guess", () => {
    expect(networkEvidence({ schema: "leasehold.evidence/1" })).toBeNull();
    expect(networkEvidence(null)).toBeNull();
  });
});
