import { createHash, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { LeaseholdError, canonicalBytes } from "../index";
import { scrubBuffer } from "../scrub/index";
import {
  EvidenceEnvelope,
  buildLaunchEvidence,
  buildRefusalEvidence,
  evidenceDigest,
  generateHostKeyPair,
  signEvidence,
  verifyEvidence,
} from "./index";
// eslint-disable-next-line no-restricted-imports -- a type only (erased, nothing of the addon loads): the tests feed the launcher's full read-back, as the guest does
import type { LaunchResult } from "../../../native/index";

/** The launcher's full read-back: the guest passes it as it is, so the tests do too. */
type NativeReadback = Pick<LaunchResult, "exit" | "timing" | "enforcement" | "limitations">;

const HASH = `sha256:${"ab".repeat(32)}`;

/** A read-back shaped like native/ launch() returns on a tier-C host. */
function readback(over: Partial<NativeReadback["enforcement"]> = {}): NativeReadback {
  return {
    exit: { code: 0, signal: null, timed_out: false, oom_killed: false, pids_exhausted: false },
    timing: { started_at: "2025-01-01T00:00:00.000Z", ended_at: "2025-01-01T00:00:00.120Z", wall_ms: 120, setup_ms: 30, cpu_ms: 3 },
    enforcement: {
      namespaces: ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"],
      uid: { inside: 0, host: 1610612737 },
      gid: { inside: 0, host: 1610612737 },
      cgroup: { hierarchy: "v1", memory_max: 536870912, memsw_max: null, pids_max: 128, cpu_quota_us: 100000, cpu_period_us: 100000, cgroup_id: 4242 },
      seccomp: true,
      seccomp_filters: 1,
      landlock_abi: 6,
      no_new_privs: true,
      cap_effective: "0000000000000000",
      cap_bounding: "0000000000000000",
      ...over,
    },
    limitations: ["memory+swap limit not available (no memsw accounting)"],
  };
}

function launched(over: Partial<NativeReadback["enforcement"]> = {}, patch: Partial<NativeReadback> = {}) {
  const stdout = scrubBuffer(Buffer.from(`key AK${"IA"}IOSFODNN7EXAMPLE\n`));
  return buildLaunchEvidence({
    action_id: "act_1",
    action_hash: HASH,
    host_id: "local",
    producer: { capability: "shell", version: "1.0.0", worker_digest: `sha256:${"cd".repeat(32)}` },
    launch: { ...readback(over), ...patch },
    bpf: { tier: "C", attached: false },
    artifacts: [
      { name: "stdout", content: stdout.output, truncated: false },
      { name: "stderr", content: Buffer.alloc(0), truncated: false },
    ],
    redactions: stdout.report,
  });
}

describe("building the envelope", () => {
  it("copies enforcement from the read-back and follows the v1 shape", () => {
    const env = launched();
    expect(EvidenceEnvelope.parse(env)).toEqual(env);
    expect(env.schema).toBe("leasehold.evidence/1");
    expect(env.enforcement).toEqual({
      namespaces: ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"],
      cgroup: { memory_max: 536870912, pids_max: 128 },
      seccomp: true,
      landlock_abi: 6,
      bpf: { tier: "C", attached: false },
    });
    expect(env.exit).toEqual({ code: 0, signal: null, timed_out: false, oom_killed: false });
    expect(env.redactions).toEqual({ count: 1, kinds: ["aws_access_key"] });
    const stdout = "key [REDACTED:aws_access_key]\n";
    expect(env.artifacts[0]).toEqual({ name: "stdout", sha256: createHash("sha256").update(stdout).digest("hex"), bytes: stdout.length, truncated: false });
    expect(env.timing).toEqual({ started_at: "2025-01-01T00:00:00.000Z", ended_at: "2025-01-01T00:00:00.120Z", cpu_ms: 3 });
    expect(env.limitations).toContain("memory+swap limit not available (no memsw accounting)");
    expect(env.limitations.some((l) => l.includes("no BPF program enforced this lease (tier C)"))).toBe(true);
    expect(JSON.stringify(env)).not.toContain("IOSFODNN7");
  });

  it("leaves out what was not measured and says so", () => {
    const env = launched({ landlock_abi: null, seccomp: false, cgroup: { hierarchy: "v1", memory_max: 9223372036854771712, memsw_max: null, pids_max: 0, cpu_quota_us: 0, cpu_period_us: 0, cgroup_id: 0 } });
    expect(env.enforcement?.landlock_abi).toBeUndefined();
    expect(env.enforcement?.cgroup).toBeUndefined();
    expect(env.enforcement?.seccomp).toBe(false);
    expect(env.limitations).toEqual(
      expect.arrayContaining([
        "Landlock not in force (no ABI read back)",
        "cgroup memory limit not read back",
        "cgroup pids limit not read back",
        "no seccomp filter read back in the sandbox",
      ]),
    );
  });

  it("an unread OOM counter leaves exit.oom_killed out (never false) and carries the launcher's limitation", () => {
    const native = 'cgroup_stats.oom_kill not measured (exit.oom_killed unknown): could not read "oom_kill" from cgroup v2 memory.events (EIO)';
    const env = launched({}, {
      exit: { code: null, signal: "SIGKILL", timed_out: false, oom_killed: null, pids_exhausted: null },
      limitations: [native],
    });
    expect(env.exit).toEqual({ code: null, signal: "SIGKILL", timed_out: false });
    expect(env.exit).not.toHaveProperty("oom_killed");
    expect(env.limitations).toEqual(expect.arrayContaining([native, "OOM kill not measured: exit.oom_killed absent"]));
    expect(EvidenceEnvelope.parse(env)).toEqual(env);
    const keys = generateHostKeyPair();
    expect(verifyEvidence(JSON.parse(JSON.stringify(signEvidence(env, keys.privateKey))), keys.publicKey).ok).toBe(true);
    // A measured answer is kept as measured, false included.
    expect(launched({}, { exit: { code: null, signal: "SIGKILL", timed_out: false, oom_killed: true, pids_exhausted: null } }).exit?.oom_killed).toBe(true);
    expect(launched().exit?.oom_killed).toBe(false);
    expect(launched().limitations).not.toContain("OOM kill not measured: exit.oom_killed absent");
  });

  it("the schema has no null for oom_killed: unknown can only be absent", () => {
    const env = launched();
    expect(EvidenceEnvelope.safeParse({ ...env, exit: { ...env.exit, oom_killed: null } }).success).toBe(false);
    const { oom_killed: _measured, ...withoutOom } = env.exit!;
    expect(EvidenceEnvelope.safeParse({ ...env, exit: withoutOom }).success).toBe(true);
  });

  it("says when the worker digest was not measured", () => {
    const env = buildRefusalEvidence({
      action_id: "act_2",
      action_hash: HASH,
      host_id: "local",
      producer: { capability: "shell", version: "1.0.0" },
      refusal: { code: "POLICY_REFUSED", message: "host ceiling (guest check): memory_bytes exceeds" },
      at: new Date("2025-01-01T00:00:00Z"),
    });
    expect(env.producer).toEqual({ capability: "shell", version: "1.0.0" });
    expect(env.exit).toBeUndefined();
    expect(env.enforcement).toBeUndefined();
    expect(env.limitations[0]).toMatch(/^not launched: POLICY_REFUSED/);
    expect(env.limitations).toContain("worker digest not measured");
  });

  it("refuses to build an envelope outside the schema", () => {
    expect(() =>
      buildRefusalEvidence({
        action_id: "act_3",
        action_hash: "not-a-hash",
        host_id: "local",
        producer: { capability: "shell", version: "1.0.0" },
        refusal: { code: "X", message: "y" },
        at: new Date(),
      }),
    ).toThrow(LeaseholdError);
  });

  it("the strict schema refuses unknown fields, numeric confidence and other states", () => {
    const env = launched();
    expect(EvidenceEnvelope.safeParse({ ...env, confidence: 0.9 }).success).toBe(false);
    expect(EvidenceEnvelope.safeParse({ ...env, state: "likely" }).success).toBe(false);
    expect(EvidenceEnvelope.safeParse({ ...env, enforcement: { ...env.enforcement, memory: "512m" } }).success).toBe(false);
    expect(EvidenceEnvelope.safeParse({ ...env, exit: { ...env.exit, pids_exhausted: false } }).success).toBe(false);
    expect(EvidenceEnvelope.safeParse({ ...env, artifacts: [{ name: "stdout", sha256: "x", bytes: 1, truncated: false }] }).success).toBe(false);
  });
});

describe("signing and verifying", () => {
  const keys = generateHostKeyPair();

  it("verifies a signed envelope and returns its digest", () => {
    const signed = signEvidence(launched(), keys.privateKey);
    const result = verifyEvidence(JSON.parse(JSON.stringify(signed)), keys.publicKey);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.digest).toBe(evidenceDigest(signed.envelope));
  });

  it("the signature is over the JCS bytes, so key order on the wire does not matter", () => {
    const signed = signEvidence(launched(), keys.privateKey);
    const reordered = Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(signed.envelope)) as Record<string, unknown>).reverse());
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(signed.envelope));
    expect(Buffer.from(canonicalBytes(reordered)).equals(Buffer.from(canonicalBytes(signed.envelope)))).toBe(true);
    expect(verifyEvidence({ envelope: reordered, signature: signed.signature }, keys.publicKey).ok).toBe(true);
  });

  const tamper: Array<[string, (e: Record<string, unknown>) => void]> = [
    ["exit code", (e) => ((e.exit as { code: number }).code = 1)],
    ["redaction count", (e) => ((e.redactions as { count: number }).count = 0)],
    ["artifact digest", (e) => ((e.artifacts as Array<{ sha256: string }>)[0]!.sha256 = "0".repeat(64))],
    ["limitations removed", (e) => (e.limitations = [])],
    ["tier raised", (e) => ((e.enforcement as { bpf: { tier: string } }).bpf.tier = "A")],
    ["action hash", (e) => (e.action_hash = `sha256:${"00".repeat(32)}`)],
    ["state", (e) => (e.state = "derived")],
  ];
  it.each(tamper)("a tampered envelope (%s) fails", (_name, mutate) => {
    const signed = signEvidence(launched(), keys.privateKey);
    const copy = JSON.parse(JSON.stringify(signed)) as { envelope: Record<string, unknown>; signature: unknown };
    mutate(copy.envelope);
    expect(verifyEvidence(copy, keys.publicKey)).toEqual({ ok: false, reason: "signature does not verify" });
  });

  it("fails for another host's key, a forged key id, a mangled signature and junk", () => {
    const signed = signEvidence(launched(), keys.privateKey);
    const other = generateHostKeyPair();
    expect(verifyEvidence(signed, other.publicKey)).toEqual({ ok: false, reason: "signed by a different key" });
    const forged = signEvidence(launched(), other.privateKey);
    expect(verifyEvidence({ envelope: forged.envelope, signature: { ...forged.signature, key_id: signed.signature.key_id } }, keys.publicKey).ok).toBe(false);
    const sig = Buffer.from(signed.signature.sig, "base64");
    sig[0] = (sig[0] ?? 0) ^ 1;
    expect(verifyEvidence({ ...signed, signature: { ...signed.signature, sig: sig.toString("base64") } }, keys.publicKey).ok).toBe(false);
    expect(verifyEvidence({ ...signed, extra: 1 }, keys.publicKey).ok).toBe(false);
    expect(verifyEvidence({ envelope: { ...signed.envelope, confidence: 1 }, signature: signed.signature }, keys.publicKey).ok).toBe(false);
    expect(verifyEvidence(null, keys.publicKey).ok).toBe(false);
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
    expect(verifyEvidence(signed, rsa.publicKey)).toEqual({ ok: false, reason: "verification key is not Ed25519" });
    expect(() => signEvidence(launched(), rsa.privateKey)).toThrow(LeaseholdError);
  });
});

describe("egress leases: tier, BPF object, denials and resolved names", () => {
  const SHA = "ef".repeat(32);
  function egressEvidence(denials: number, dropped: number) {
    return buildLaunchEvidence({
      action_id: "act_net",
      action_hash: HASH,
      host_id: "local",
      producer: { capability: "egress-shell", version: "1.0.0", worker_digest: `sha256:${"cd".repeat(32)}` },
      launch: readback(),
      bpf: {
        tier: "B",
        attached: true,
        object_sha256: SHA,
        denials: Array.from({ length: denials }, (_, i) => ({ kind: "connect" as const, pid: 100 + i, comm: "python3", address: "10.77.0.2", port: 9, protocol: "tcp" as const, family: 4 })),
        denials_dropped: dropped,
      },
      artifacts: [{ name: "stdout", content: Buffer.from("ok\n"), truncated: false }],
      redactions: { count: 0, kinds: [] },
      resolvedNames: [{ name: "api.example.test", addresses: ["10.77.0.2", "fd00::2"] }],
    });
  }

  it("lists every denial with the tier and the object digest, and the resolved names; signed and verified as v1", () => {
    const env = egressEvidence(2, 0);
    expect(env.enforcement?.bpf).toEqual({
      tier: "B",
      attached: true,
      object_sha256: SHA,
      denials: [
        { kind: "connect", pid: 100, comm: "python3", address: "10.77.0.2", port: 9, protocol: "tcp", family: 4 },
        { kind: "connect", pid: 101, comm: "python3", address: "10.77.0.2", port: 9, protocol: "tcp", family: 4 },
      ],
      denials_dropped: 0,
    });
    expect(env.resolved_names).toEqual([{ name: "api.example.test", addresses: ["10.77.0.2", "fd00::2"] }]);
    expect(env.limitations.some((l) => l.includes("denial"))).toBe(false);
    const { privateKey, publicKey } = generateHostKeyPair();
    const verified = verifyEvidence(signEvidence(env, privateKey), publicKey);
    expect(verified.ok).toBe(true);
  });

  it("beyond 256 denials the rest are counted with the ring buffer's losses, and a limitation says so", () => {
    const env = egressEvidence(300, 5);
    expect(env.enforcement?.bpf?.denials).toHaveLength(256);
    expect(env.enforcement?.bpf?.denials_dropped).toBe(49);
    expect(env.limitations).toContain("49 denial(s) not listed (lost by the ring buffer or beyond the 256 an envelope lists)");
  });

  it("an attached lease without denials read back says so; a denial outside the schema is refused", () => {
    const env = buildLaunchEvidence({
      action_id: "a",
      action_hash: HASH,
      host_id: "local",
      producer: { capability: "egress-shell", version: "1.0.0" },
      launch: readback(),
      bpf: { tier: "B", attached: true, object_sha256: SHA },
      artifacts: [],
      redactions: { count: 0, kinds: [] },
    });
    expect(env.limitations).toContain("BPF denials not read back");
    expect(env.resolved_names).toBeUndefined();
    expect(() =>
      buildLaunchEvidence({
        action_id: "a",
        action_hash: HASH,
        host_id: "local",
        producer: { capability: "egress-shell", version: "1.0.0" },
        launch: readback(),
        bpf: { tier: "B", attached: true, object_sha256: SHA, denials: [{ kind: "teleport" as "exec", pid: 1, comm: "x" }], denials_dropped: 0 },
        artifacts: [],
        redactions: { count: 0, kinds: [] },
      }),
    ).toThrow(LeaseholdError);
  });
});

describe("host paths in the envelope", () => {
  const build = (mounts: Parameters<typeof buildLaunchEvidence>[0]["mounts"]) =>
    buildLaunchEvidence({
      action_id: "act_1",
      action_hash: HASH,
      host_id: "local",
      producer: { capability: "shell", version: "1.0.0", worker_digest: `sha256:${"cd".repeat(32)}` },
      launch: readback(),
      bpf: { tier: "C", attached: false },
      artifacts: [],
      redactions: { count: 0, kinds: [] },
      ...(mounts === undefined ? {} : { mounts }),
    });

  it("lists the mounts sorted by label, rw with its digests and snapshot; none: no field", () => {
    const d = `sha256:${"1".repeat(64)}`;
    const e = build([
      { label: "logs", path: "/var/log", mode: "ro" },
      { label: "app", path: "/srv/app", mode: "rw", tree_before: d, tree_after: d, snapshot_id: "s1-abc" },
    ]);
    expect(e.mounts?.map((m) => m.label)).toEqual(["app", "logs"]);
    expect(e.mounts?.[0]).toEqual({ label: "app", path: "/srv/app", mode: "rw", tree_before: d, tree_after: d, snapshot_id: "s1-abc" });
    expect("mounts" in build(undefined)).toBe(false);
    expect("mounts" in build([])).toBe(false);
  });

  it("refuses a malformed tree digest or an unknown mount field", () => {
    expect(() => build([{ label: "app", path: "/srv/app", mode: "rw", tree_before: "sha256:nothex" }])).toThrow(/mounts/);
    expect(() => build([{ label: "app", path: "/srv/app", mode: "rw", follow: true } as never])).toThrow(/mounts/);
  });
});
