/**
 * An action's evidence as the page shows it: the stored envelope re-verified
 * with the same `verifyEvidence` the hub runs at intake, against the host key
 * it enrolled, plus digest, binding, stored-output and seal checks, and the
 * kernel side of the lease (network enforcement) one line per denial.
 */
import { createHash, createPublicKey } from "node:crypto";
import { eq } from "drizzle-orm";
import { EvidenceEnvelope, hostKeyId, verifyEvidence } from "../trust/evidence";
import type { Database } from "../db";
import { hosts, jobs, type evidence } from "../db/schema";
import { readJobOutput } from "../jobs/intake";
import type { TimelineEntry } from "./timeline";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface EvidenceView {
  envelope: unknown;
  digest: string;
  signature: string;
  key_id: string | null;
  /** Every check passed. */
  verified: boolean;
  checks: Check[];
  /** The kernel side of the lease as the envelope reports it (null when the envelope has no BPF section or does not parse). */
  network: NetworkEvidenceView | null;
}

/** Tier, BPF object, denials and resolved names of one lease, one line per denial for display. */
export interface NetworkEvidenceView {
  tier: "A" | "B" | "C";
  attached: boolean;
  object_sha256: string | null;
  /** One readable line per denial, e.g. "connect tcp 10.0.0.9:22 refused (pid 42, python3)". */
  denials: string[];
  denials_dropped: number | null;
  resolved_names: { name: string; addresses: string[] }[];
}

function denialLine(d: NonNullable<NonNullable<NonNullable<EvidenceEnvelope["enforcement"]>["bpf"]>["denials"]>[number]): string {
  const where =
    d.kind === "connect" || d.kind === "sendmsg"
      ? `${d.protocol ?? ""} ${d.address === undefined ? "?" : d.address.includes(":") ? `[${d.address}]` : d.address}:${d.port ?? "?"}`.trim()
      : d.kind === "socket"
        ? `family ${d.family ?? "?"}${d.protocol === undefined ? "" : ` ${d.protocol}`}`
        : `dev ${d.dev ?? "?"} ino ${d.ino ?? "?"}`;
  return `${d.kind} ${where} refused (pid ${d.pid}, ${d.comm})`;
}

/** What the envelope says about the lease's kernel enforcement, for the page (the envelope itself stays the record). */
export function networkEvidence(envelope: unknown): NetworkEvidenceView | null {
  const parsed = EvidenceEnvelope.safeParse(envelope);
  if (!parsed.success) return null;
  const bpf = parsed.data.enforcement?.bpf;
  if (bpf === undefined) return null;
  return {
    tier: bpf.tier,
    attached: bpf.attached,
    object_sha256: bpf.object_sha256 ?? null,
    denials: (bpf.denials ?? []).map(denialLine),
    denials_dropped: bpf.denials_dropped ?? null,
    resolved_names: (parsed.data.resolved_names ?? []).map((n) => ({ name: n.name, addresses: [...n.addresses] })),
  };
}

/** Re-runs the intake checks on the stored envelope: signature (same `verifyEvidence`), digest, binding, artifacts, seal. */
export async function verifyStoredEvidence(
  db: Database,
  row: typeof evidence.$inferSelect,
  action: { id: string; actionHash: string },
  keyIdFromResult: string | null,
  sealed: TimelineEntry | undefined,
): Promise<EvidenceView> {
  const checks: Check[] = [];
  const [host] = await db.select().from(hosts).where(eq(hosts.id, row.hostId));
  let digest: string | null = null;
  let keyId = keyIdFromResult;
  if (host === undefined) {
    checks.push({ name: "signature", ok: false, detail: "the host that signed it is not in the database" });
  } else {
    const key = createPublicKey(host.publicKey);
    keyId ??= hostKeyId(key);
    const verified = verifyEvidence({ envelope: row.envelope, signature: { alg: "Ed25519", key_id: keyId, sig: row.signature } }, key);
    if (verified.ok) {
      digest = verified.digest;
      checks.push({ name: "signature", ok: true, detail: `Ed25519 signature over the JCS bytes of the envelope verifies with host ${host.name}'s key enrolled ${host.enrolledAt.toISOString()} (${keyId}); schema leasehold.evidence/1 checked` });
    } else {
      checks.push({ name: "signature", ok: false, detail: `${verified.reason} (host ${host.name}, key ${keyId})` });
    }
  }
  checks.push(
    digest === null
      ? { name: "digest", ok: false, detail: "not computed: the signature did not verify" }
      : { name: "digest", ok: digest === row.envelopeSha256, detail: digest === row.envelopeSha256 ? `envelope digest ${digest} is the one stored at intake` : `envelope digest ${digest} differs from the stored ${row.envelopeSha256}` },
  );
  const env = row.envelope as { action_id?: unknown; action_hash?: unknown; host_id?: unknown; artifacts?: Array<{ name: string; sha256: string; bytes: number }> };
  const bound = env.action_id === action.id && env.action_hash === action.actionHash && env.host_id === row.hostId;
  checks.push({ name: "binding", ok: bound, detail: bound ? "names this action id, its action_hash and the host that ran it" : "names another action, action_hash or host" });
  if (row.jobId !== null) {
    const [job] = await db.select({ result: jobs.result }).from(jobs).where(eq(jobs.id, row.jobId));
    const pruned = (job?.result as { output_pruned_by?: string } | null)?.output_pruned_by;
    if (pruned !== undefined) {
      checks.push({ name: "artifacts", ok: true, detail: `output pruned (${pruned}); the envelope keeps its sha256 and size` });
    } else {
      const stored = await readJobOutput(db, row.jobId);
      const streams = (env.artifacts ?? []).filter((a) => a.name === "stdout" || a.name === "stderr");
      const bad = streams.filter((a) => {
        const bytes = stored[a.name] ?? Buffer.alloc(0);
        return bytes.length !== a.bytes || createHash("sha256").update(bytes).digest("hex") !== a.sha256;
      });
      const uncovered = Object.entries(stored).filter(([name, bytes]) => bytes.length > 0 && !streams.some((a) => a.name === name)).map(([name]) => name);
      const ok = bad.length === 0 && uncovered.length === 0;
      checks.push({
        name: "artifacts",
        ok,
        detail: ok
          ? `stored output matches the envelope's sha256 and byte count (${streams.map((a) => `${a.name} ${a.bytes} B`).join(", ") || "no output"})`
          : `stored output differs from the envelope: ${[...bad.map((a) => a.name), ...uncovered.map((n) => `${n} (not covered)`)].join(", ")}`,
      });
    }
  }
  const sealedDigest = sealed?.data?.["envelope_digest"];
  checks.push(
    sealed === undefined
      ? { name: "sealed", ok: false, detail: "no evidence/1 ledger entry names this action" }
      : { name: "sealed", ok: sealedDigest === row.envelopeSha256, detail: sealedDigest === row.envelopeSha256 ? `the evidence/1 entry (${sealed.leaf_index === null ? "awaiting integration" : `leaf ${sealed.leaf_index}`}) seals this digest` : "the evidence/1 entry seals another digest" },
  );
  return { envelope: row.envelope, digest: row.envelopeSha256, signature: row.signature, key_id: keyId, verified: checks.every((c) => c.ok), checks, network: networkEvidence(row.envelope) };
}
