import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import { z } from "zod";
import { EvidenceMount } from "../host-paths";
import { LeaseholdError, canonicalBytes, canonicalDigest } from "../index";

/**
 * Evidence envelope v1 (docs/design.md#evidence): what the host
 * observed about one action, signed by the host's Ed25519 key over the RFC
 * 8785 (JCS) bytes of the envelope.
 *
 * Rules this module keeps:
 *  - enforcement values come from the launcher's read-back (`LaunchResult`),
 *    never from the policy that was requested — the builder does not take the
 *    policy at all;
 *  - a value that was not measured (or read back as nonsense) is absent and
 *    a line in `limitations` says so; no figure is invented;
 *  - `state` is one of observed / derived / hypothesized; no confidence number;
 *  - artifact digests are over the scrubbed bytes — the only bytes that leave
 *    the host; redactions carry only `{count, kinds}`.
 * The schema is strict: the fields are exactly those of docs/design.md#evidence, each
 * measured field optional so that "absent" is expressible.
 */

export const EVIDENCE_SCHEMA = "leasehold.evidence/1" as const;

const NAMESPACE_NAMES = ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup", "time"] as const;
type NamespaceName = (typeof NAMESPACE_NAMES)[number];
const isNamespace = (n: string): n is NamespaceName => (NAMESPACE_NAMES as readonly string[]).includes(n);

const sha256Prefixed = z.string().regex(/^sha256:[0-9a-f]{64}$/);
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const nonNegInt = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const shortText = z.string().min(1).max(256);

/** At most this many denials are listed in one envelope; the rest are counted in `denials_dropped`. */
export const MAX_EVIDENCE_DENIALS = 256;

/**
 * One denial the BPF programs reported for the lease (native LaunchResult
 * `bpf.denials`): what was refused, by which process. `address` is the
 * canonical text of the destination (RFC 5952 for IPv6).
 */
const BpfDenialSchema = z
  .object({
    kind: z.enum(["exec", "connect", "sendmsg", "socket", "file"]),
    pid: nonNegInt,
    comm: z.string().max(16),
    address: z.string().min(1).max(64).optional(),
    port: z.number().int().min(0).max(65535).optional(),
    protocol: z.enum(["tcp", "udp"]).optional(),
    family: z.number().int().min(0).max(255).optional(),
    /** socket: the SOCK_* type and protocol number that were refused */
    socket_type: z.number().int().min(0).max(0xffff).optional(),
    socket_protocol: z.number().int().min(0).max(0xffff).optional(),
    dev: nonNegInt.optional(),
    ino: nonNegInt.optional(),
  })
  .strict();
export type EvidenceDenial = z.infer<typeof BpfDenialSchema>;

export const EvidenceEnvelope = z
  .object({
    schema: z.literal(EVIDENCE_SCHEMA),
    action_id: shortText,
    action_hash: sha256Prefixed,
    host_id: shortText,
    producer: z
      .object({
        capability: shortText,
        version: shortText,
        worker_digest: sha256Prefixed.optional(),
      })
      .strict(),
    state: z.enum(["observed", "derived", "hypothesized"]),
    artifacts: z
      .array(
        z
          .object({
            name: shortText,
            sha256: sha256Hex,
            bytes: nonNegInt,
            truncated: z.boolean(),
          })
          .strict(),
      )
      .max(64),
    exit: z
      .object({
        code: z.number().int().min(0).max(255).nullable(),
        signal: z.string().max(32).nullable(),
        timed_out: z.boolean(),
        /** true when the hub stopped the run (docs/design.md#cancel) and the lease's cgroup was killed; absent otherwise */
        cancelled: z.literal(true).optional(),
        /** absent when the lease's OOM counter could not be read (a `limitations` line says so) */
        oom_killed: z.boolean().optional(),
      })
      .strict()
      .optional(),
    enforcement: z
      .object({
        namespaces: z.array(z.enum(NAMESPACE_NAMES)).max(8),
        cgroup: z.object({ memory_max: nonNegInt.optional(), pids_max: nonNegInt.optional() }).strict().optional(),
        seccomp: z.boolean().optional(),
        landlock_abi: z.number().int().min(1).max(64).optional(),
        bpf: z
          .object({
            tier: z.enum(["A", "B", "C"]),
            attached: z.boolean(),
            object_sha256: sha256Hex.optional(),
            /** What the programs refused during the lease, in the order reported (absent: not measured). */
            denials: z.array(BpfDenialSchema).max(MAX_EVIDENCE_DENIALS).optional(),
            /** Denials not listed: lost by the ring buffer or beyond the listed maximum. */
            denials_dropped: nonNegInt.optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /**
     * Egress names the guest resolved outside the sandbox when the lease
     * started, each with every address the sandbox was allowed for it (and
     * found in its /etc/hosts). Absent when the policy named no host.
     */
    resolved_names: z
      .array(z.object({ name: z.string().min(1).max(253), addresses: z.array(z.string().min(2).max(39)).min(1).max(32) }).strict())
      .max(64)
      .optional(),
    /**
     * The host paths bound into the lease (docs/design.md#evidence), sorted by
     * label; for a "rw" label the tree digest before and after and the
     * snapshot taken before it ran. Absent when the job had none.
     */
    mounts: z.array(EvidenceMount).max(32).optional(),
    redactions: z.object({ count: nonNegInt, kinds: z.array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/)).max(64) }).strict(),
    timing: z
      .object({
        started_at: z.iso.datetime(),
        ended_at: z.iso.datetime(),
        cpu_ms: nonNegInt.optional(),
      })
      .strict(),
    limitations: z.array(z.string().min(1).max(1024)).max(64),
  })
  .strict();
export type EvidenceEnvelope = z.infer<typeof EvidenceEnvelope>;

export const SignedEvidence = z
  .object({
    envelope: z.unknown(),
    signature: z
      .object({
        alg: z.literal("Ed25519"),
        /** `sha256:` of the raw 32-byte public key — which enrolled key to try. */
        key_id: sha256Prefixed,
        /** base64 of the 64-byte signature over JCS(envelope). */
        sig: z.string().regex(/^[A-Za-z0-9+/]{86}==$/),
      })
      .strict(),
  })
  .strict();
export type SignedEvidence = { envelope: EvidenceEnvelope; signature: { alg: "Ed25519"; key_id: string; sig: string } };

/**
 * What the launcher read back (native `LaunchResult`), only the fields
 * evidence uses. Declared here, not imported, because the contract loads
 * nothing of the guest; the guest hands its `LaunchResult` over as it is, so
 * the compiler checks that the two agree.
 */
export interface LaunchReadback {
  exit: { code: number | null; signal: string | null; timed_out: boolean; cancelled?: true; oom_killed: boolean | null };
  timing: { started_at: string; ended_at: string; cpu_ms: number };
  enforcement: {
    namespaces: string[];
    cgroup: { memory_max: number; pids_max: number };
    seccomp: boolean;
    landlock_abi: number | null;
  };
  limitations: string[];
}

/** The kernel tier the host probe/BPF loader reports for this lease (read back, not configured). */
export interface BpfReadback {
  tier: "A" | "B" | "C";
  attached: boolean;
  object_sha256?: string;
  /** The launch's denials (native `LaunchResult.bpf`); absent when no program watched the lease. */
  denials?: readonly EvidenceDenial[];
  denials_dropped?: number;
}

export interface EvidenceCommon {
  action_id: string;
  action_hash: string;
  host_id: string;
  producer: { capability: string; version: string; worker_digest?: string };
}

export interface LaunchEvidenceInput extends EvidenceCommon {
  state?: EvidenceEnvelope["state"];
  launch: LaunchReadback;
  bpf: BpfReadback;
  /** Scrubbed outputs: the bytes that leave the host, with the launcher's truncation flag. */
  artifacts: Array<{ name: string; content: Uint8Array; truncated: boolean }>;
  redactions: { count: number; kinds: string[] };
  /** Names resolved for the lease's egress list (agent-guest/egress). */
  resolvedNames?: ReadonlyArray<{ name: string; addresses: readonly string[] }>;
  /**
   * What the workload was given to read (a bundle worker's input artifact),
   * by the digest the guest verified before launch; listed after the outputs.
   */
  inputs?: ReadonlyArray<{ name: string; sha256: string; bytes: number }>;
  /** The host paths bound into the lease, with the guest's tree digests for "rw" labels. */
  mounts?: readonly EvidenceMount[];
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function invalid(message: string, cause?: unknown): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `evidence envelope: ${message}`, { tier: "guest", cause });
}

function finish(envelope: EvidenceEnvelope): EvidenceEnvelope {
  const parsed = EvidenceEnvelope.safeParse(envelope);
  if (!parsed.success) invalid(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return envelope;
}

function producerOf(input: EvidenceCommon, limitations: string[]): EvidenceEnvelope["producer"] {
  const producer: EvidenceEnvelope["producer"] = { capability: input.producer.capability, version: input.producer.version };
  if (input.producer.worker_digest !== undefined) producer.worker_digest = input.producer.worker_digest;
  else limitations.push("worker digest not measured");
  return producer;
}

/** The fields every envelope opens with: what it is, which action and host, who produced it. */
function headerOf(input: EvidenceCommon, limitations: string[]): Pick<EvidenceEnvelope, "schema" | "action_id" | "action_hash" | "host_id" | "producer"> {
  return { schema: EVIDENCE_SCHEMA, action_id: input.action_id, action_hash: input.action_hash, host_id: input.host_id, producer: producerOf(input, limitations) };
}

/** Builds the envelope for an action that ran, from the launcher's read-back. */
export function buildLaunchEvidence(input: LaunchEvidenceInput): EvidenceEnvelope {
  const rb = input.launch;
  const limitations: string[] = [...rb.limitations];
  const enforcement: NonNullable<EvidenceEnvelope["enforcement"]> = {
    namespaces: rb.enforcement.namespaces.filter(isNamespace),
  };
  const cgroup: { memory_max?: number; pids_max?: number } = {};
  const memoryMax = rb.enforcement.cgroup.memory_max;
  // cgroup v1 reads "no limit" back as a huge page-rounded number; that is not a limit.
  if (isCount(memoryMax) && memoryMax > 0) cgroup.memory_max = memoryMax;
  else limitations.push("cgroup memory limit not read back");
  const pidsMax = rb.enforcement.cgroup.pids_max;
  if (isCount(pidsMax) && pidsMax > 0) cgroup.pids_max = pidsMax;
  else limitations.push("cgroup pids limit not read back");
  if (Object.keys(cgroup).length > 0) enforcement.cgroup = cgroup;
  enforcement.seccomp = rb.enforcement.seccomp;
  if (!rb.enforcement.seccomp) limitations.push("no seccomp filter read back in the sandbox");
  if (rb.enforcement.landlock_abi !== null && rb.enforcement.landlock_abi >= 1) enforcement.landlock_abi = rb.enforcement.landlock_abi;
  else limitations.push("Landlock not in force (no ABI read back)");
  const bpf: NonNullable<NonNullable<EvidenceEnvelope["enforcement"]>["bpf"]> = { tier: input.bpf.tier, attached: input.bpf.attached };
  if (input.bpf.object_sha256 !== undefined) bpf.object_sha256 = input.bpf.object_sha256;
  else if (input.bpf.attached) limitations.push("BPF object digest not measured");
  if (!input.bpf.attached) {
    limitations.push(`no BPF program enforced this lease (tier ${input.bpf.tier}): exec/file/connect allow-lists rest on Landlock and the empty network namespace`);
  }
  if (input.bpf.denials !== undefined) {
    const listed = input.bpf.denials.slice(0, MAX_EVIDENCE_DENIALS).map((d) => ({ ...d }));
    const beyond = input.bpf.denials.length - listed.length;
    const reportedDropped = isCount(input.bpf.denials_dropped) ? input.bpf.denials_dropped : 0;
    bpf.denials = listed;
    bpf.denials_dropped = reportedDropped + beyond;
    if (bpf.denials_dropped > 0) limitations.push(`${bpf.denials_dropped} denial(s) not listed (lost by the ring buffer or beyond the ${MAX_EVIDENCE_DENIALS} an envelope lists)`);
  } else if (input.bpf.attached) {
    limitations.push("BPF denials not read back");
  }
  enforcement.bpf = bpf;

  // An unread OOM counter is unknown, not "no OOM kill": leave the field out.
  const exit: NonNullable<EvidenceEnvelope["exit"]> = { code: rb.exit.code, signal: rb.exit.signal, timed_out: rb.exit.timed_out };
  if (rb.exit.cancelled === true) exit.cancelled = true;
  if (rb.exit.oom_killed !== null) exit.oom_killed = rb.exit.oom_killed;
  else limitations.push("OOM kill not measured: exit.oom_killed absent");

  const timing: EvidenceEnvelope["timing"] = { started_at: rb.timing.started_at, ended_at: rb.timing.ended_at };
  if (isCount(rb.timing.cpu_ms)) timing.cpu_ms = rb.timing.cpu_ms;
  else limitations.push("cpu time not measured");

  return finish({
    ...headerOf(input, limitations),
    state: input.state ?? "observed",
    artifacts: input.artifacts.map((a) => ({
      name: a.name,
      sha256: createHash("sha256").update(a.content).digest("hex"),
      bytes: a.content.byteLength,
      truncated: a.truncated,
    })).concat((input.inputs ?? []).map((i) => ({ name: i.name, sha256: i.sha256, bytes: i.bytes, truncated: false }))),
    exit,
    enforcement,
    ...(input.resolvedNames !== undefined && input.resolvedNames.length > 0
      ? { resolved_names: input.resolvedNames.map((n) => ({ name: n.name, addresses: [...n.addresses] })) }
      : {}),
    ...(input.mounts !== undefined && input.mounts.length > 0 ? { mounts: [...input.mounts].map((m) => ({ ...m })).sort((a, b) => (a.label < b.label ? -1 : 1)) } : {}),
    redactions: { count: input.redactions.count, kinds: [...new Set(input.redactions.kinds)].sort() },
    timing,
    limitations: [...new Set(limitations)],
  });
}

/**
 * The envelope for an action refused or failed on the guest before anything
 * ran (docs/design.md#evidence: failures and refusals are sealed too). No exit, no
 * enforcement: nothing was launched, so nothing was measured.
 */
export function buildRefusalEvidence(input: EvidenceCommon & { refusal: { code: string; message: string }; at: Date }): EvidenceEnvelope {
  const limitations = [`not launched: ${input.refusal.code}: ${input.refusal.message}`.slice(0, 1024)];
  const at = input.at.toISOString();
  return finish({
    ...headerOf(input, limitations),
    state: "observed",
    artifacts: [],
    redactions: { count: 0, kinds: [] },
    timing: { started_at: at, ended_at: at },
    limitations,
  });
}

// ---------------------------------------------------------------------------
// Signing and verification.

/** Raw 32-byte Ed25519 public key. */
export function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  if (pub.asymmetricKeyType !== "ed25519") invalid("host key must be Ed25519");
  const jwk = pub.export({ format: "jwk" });
  return Buffer.from(jwk.x ?? "", "base64url");
}

export function hostKeyId(key: KeyObject): string {
  return `sha256:${createHash("sha256").update(rawPublicKey(key)).digest("hex")}`;
}

/** A fresh host key pair (enrolment stores the private key root-only; not built yet). */
export function generateHostKeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync("ed25519");
}

/** `sha256:` of JCS(envelope) — what the hub seals in the ledger. */
export function evidenceDigest(envelope: EvidenceEnvelope): `sha256:${string}` {
  return canonicalDigest(envelope);
}

/** Validates the envelope and signs its JCS bytes with the host key. */
export function signEvidence(envelope: EvidenceEnvelope, privateKey: KeyObject): SignedEvidence {
  if (privateKey.type !== "private" || privateKey.asymmetricKeyType !== "ed25519") invalid("signing key must be an Ed25519 private key");
  const checked = finish(envelope);
  const sig = sign(null, canonicalBytes(checked), privateKey);
  return { envelope: checked, signature: { alg: "Ed25519", key_id: hostKeyId(privateKey), sig: sig.toString("base64") } };
}

export type VerifyResult = { ok: true; envelope: EvidenceEnvelope; digest: `sha256:${string}` } | { ok: false; reason: string };

/**
 * Hub side: verifies a signed envelope against the host's enrolled public key.
 * Denies on any doubt — malformed wrapper, envelope outside the strict schema,
 * a key id that is not this key's, a bad signature. Nothing in the envelope
 * should be believed unless this returns ok.
 */
export function verifyEvidence(signed: unknown, publicKey: KeyObject): VerifyResult {
  const wrapper = SignedEvidence.safeParse(signed);
  if (!wrapper.success) return { ok: false, reason: "not a signed evidence envelope" };
  const env = EvidenceEnvelope.safeParse(wrapper.data.envelope);
  if (!env.success) return { ok: false, reason: `envelope does not match schema v1: ${env.error.issues[0]?.path.join(".") ?? ""}` };
  let keyId: string;
  try {
    keyId = hostKeyId(publicKey);
  } catch {
    return { ok: false, reason: "verification key is not Ed25519" };
  }
  if (wrapper.data.signature.key_id !== keyId) return { ok: false, reason: "signed by a different key" };
  let bytes: Uint8Array;
  try {
    // Sign and verify over the envelope exactly as received (the strict schema
    // has no defaults or transforms, so parsing changed nothing).
    bytes = canonicalBytes(wrapper.data.envelope);
  } catch {
    return { ok: false, reason: "envelope is not canonicalisable JSON" };
  }
  const sig = Buffer.from(wrapper.data.signature.sig, "base64");
  if (sig.length !== 64 || !verify(null, bytes, publicKey, sig)) return { ok: false, reason: "signature does not verify" };
  return { ok: true, envelope: env.data, digest: canonicalDigest(wrapper.data.envelope) };
}
