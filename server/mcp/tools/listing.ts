import { computeHostReadiness, computeReadiness, hubCapabilityRegistry, type CapabilityRegistry } from "../../capabilities";
import { LeaseholdError } from "../../errors";
import { readHealth } from "../../health/read-health";
import { readHostKey } from "../../hosts";
import { cosignaturesAt } from "../../ledger/cosignatures";
import { addCosignature } from "../../trust/ledger/witness";
import { latestCheckpoint, proveInclusion } from "../../ledger/prove";
import { listHostSummaries } from "../../hosts/health";
import { hostVisible, readHostReports } from "./host-reports";
import { CAPABILITIES_SCHEMA, CHECKPOINT_SCHEMA, HEALTH_SCHEMA, HOST_KEY_SCHEMA, HOSTS_SCHEMA, PROOF_SCHEMA } from "./output-schemas";
import { auditText, capabilitiesText, healthText, hostKeyText, hostsText } from "./text";
import { PAGING_PROPERTIES, READ_ONLY_ANNOTATIONS, page, type HubTool } from "./tool";

/**
 * The hub's own read-only tools. Capability operations (run_command, ...)
 * are in actions.ts, lease_* in leases.ts; catalogue.ts lists them all.
 */

/**
 * The capability registry this process lists from: the hub's one registry
 * (server/capabilities hub-registry), so an opt-in capability an admin
 * enables is listed and callable at once.
 */
export function capabilityRegistry(): CapabilityRegistry {
  return hubCapabilityRegistry();
}

export const healthTool: HubTool = {
  name: "health",
  title: "Hub health",
  description: "The hub's health: version, uptime, database, migrations, durability settings and the audit ledger's head.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  mutating: false,
  annotations: READ_ONLY_ANNOTATIONS,
  outputSchema: HEALTH_SCHEMA,
  text: healthText,
  async run(_args, ctx) {
    return { ...(await readHealth(ctx.runtime, ctx.now)) };
  },
};

export const listCapabilitiesTool: HubTool = {
  name: "list_capabilities",
  title: "List capabilities",
  description:
    "Capabilities this hub declares, with their operations, activation (active / not enabled) and measured readiness across enrolled hosts. Readiness is measured from host reports: with no host reporting a worker a capability is only `declared`. Paged with offset/limit.",
  inputSchema: { type: "object", additionalProperties: false, properties: { ...PAGING_PROPERTIES } },
  mutating: false,
  annotations: READ_ONLY_ANNOTATIONS,
  outputSchema: CAPABILITIES_SCHEMA,
  text: capabilitiesText,
  async run(args, ctx) {
    const reports = (await readHostReports(ctx.runtime.database.handle.db, ctx.now)).filter((r) => hostVisible(ctx.token.hosts, r.host));
    const listing = capabilityRegistry()
      .list()
      .map((capability) => {
        const manifest = capabilityRegistry().get(capability.id)?.manifest;
        const readiness = manifest === undefined ? null : computeReadiness(manifest, reports, { now: ctx.now });
        return { ...capability, readiness };
      });
    const { items, ...paging } = page(listing, args);
    return { capabilities: items, ...paging };
  },
};

/** Snapshots per host in hosts_list; `leasehold snapshot list` shows them all. */
const RECENT_SNAPSHOTS = 20;

export const hostsListTool: HubTool = {
  name: "hosts_list",
  title: "List hosts",
  description:
    "Enrolled hosts this token may use: name, online, enforcement tier and per-capability readiness, the host paths its ceiling lists (label, path, maximum mode, owner, budget: what `mounts` and `label:` paths may name) and its recent snapshots (what `rollback` may restore), as each host's guest agent last reported. Empty until a host enrols. Paged with offset/limit.",
  inputSchema: { type: "object", additionalProperties: false, properties: { ...PAGING_PROPERTIES } },
  mutating: false,
  annotations: READ_ONLY_ANNOTATIONS,
  outputSchema: HOSTS_SCHEMA,
  text: hostsText,
  async run(args, ctx) {
    const reports = (await readHostReports(ctx.runtime.database.handle.db, ctx.now)).filter((r) => hostVisible(ctx.token.hosts, r.host));
    const paths = new Map((await listHostSummaries(ctx.runtime.database.handle.db, ctx.now.getTime())).map((h) => [h.name, { host_paths: h.host_paths, snapshots: h.snapshots.slice(0, RECENT_SNAPSHOTS) }]));
    const registry = capabilityRegistry();
    const listing = reports.map((report) => ({
      name: report.host,
      online: report.online,
      tier: report.tier,
      last_report_at: report.reported_at === new Date(0).toISOString() ? null : report.reported_at,
      capabilities: registry
        .list()
        .filter((c) => c.active)
        .map((c) => {
          const manifest = registry.get(c.id)?.manifest;
          const r = manifest === undefined ? null : computeHostReadiness(manifest, report, { now: ctx.now });
          // The digest this host verified for the worker (beside list_capabilities' required one).
          const worker = report.workers.find((w) => w.capability === c.id);
          return { id: c.id, state: r?.state ?? "declared", reasons: r?.reasons ?? [], worker_digest: worker?.digest ?? null };
        }),
      // What `mounts` and `label:` paths may name on this host, and what `rollback` may restore.
      ...(paths.get(report.host) ?? { host_paths: null, snapshots: [] }),
    }));
    const { items, ...paging } = page(listing, args);
    return { hosts: items, ...paging };
  },
};

export const auditCheckpointTool: HubTool = {
  name: "audit_checkpoint",
  title: "Latest audit checkpoint",
  description:
    "The newest signed checkpoint of the audit log (C2SP signed note, with the witness cosignatures received for it as extra signature lines, also listed under cosignatures) and the hub's verifier key, so the log can be checked offline with the key alone.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  mutating: false,
  annotations: READ_ONLY_ANNOTATIONS,
  outputSchema: CHECKPOINT_SCHEMA,
  text: auditText("the newest signed checkpoint (C2SP note) and the verifier key to check it with:"),
  async run(_args, ctx) {
    const db = ctx.runtime.database.handle.db;
    const head = await latestCheckpoint(db);
    if (head === null) {
      throw new LeaseholdError("NOT_FOUND", "the audit log has no signed checkpoint yet", { retryable: true, tier: "ledger", hint: "checkpoints follow appends within about a second; try again shortly" });
    }
    const cosignatures = await cosignaturesAt(db, head.size);
    // The note carries the cosignatures as extra signature lines (C2SP), the same text /api/ledger/checkpoint serves.
    const checkpoint = cosignatures.reduce((note, c) => addCosignature(note, c.line), head.note);
    return {
      origin: ctx.runtime.ledger.key.origin,
      verifier_key: ctx.runtime.ledger.key.verifier,
      tree_size: head.size,
      root_hash: head.root,
      created_at: head.created_at,
      checkpoint,
      cosignatures,
    };
  },
};

export const auditProofTool: HubTool = {
  name: "audit_proof",
  title: "Audit inclusion proof",
  description:
    "An RFC 9162 inclusion proof for the ledger entry at leaf_index against the signed checkpoint of tree_size (default: the newest). Check it with the checkpoint's signature and the hub's verifier key (audit_checkpoint).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["leaf_index"],
    properties: {
      leaf_index: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Leaf index from a receipt." },
      tree_size: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "A checkpointed tree size (default: the newest)." },
    },
  },
  mutating: false,
  annotations: READ_ONLY_ANNOTATIONS,
  outputSchema: PROOF_SCHEMA,
  text: auditText("an RFC 9162 inclusion proof; check it against the checkpoint with the verifier key (audit_checkpoint):"),
  async run(args, ctx) {
    const leafIndex = args.leaf_index as number;
    const treeSize = typeof args.tree_size === "number" ? args.tree_size : undefined;
    return { ...(await proveInclusion(ctx.runtime.database.handle.db, leafIndex, treeSize)) };
  },
};

export const hostKeyTool: HubTool = {
  name: "host_key",
  title: "A host's evidence key",
  description:
    "The Ed25519 public key (SPKI PEM) a host signs its evidence envelopes with, its key id (the `key_id` a result's evidence names), and the host/1 ledger entry that sealed it at enrolment (its key_digest is sha256 of the PEM; leaf_index for audit_proof). With these a result's evidence.signed can be verified without the hub (docs/verify.md).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["host"],
    properties: { host: { type: "string", minLength: 1, maxLength: 128, description: "The host's name (as a result's `host` names it) or its id." } },
  },
  mutating: false,
  annotations: READ_ONLY_ANNOTATIONS,
  outputSchema: HOST_KEY_SCHEMA,
  text: hostKeyText,
  async run(args, ctx) {
    return { ...(await readHostKey(ctx.runtime.database.handle.db, String(args.host), ctx.token.hosts)) };
  },
};

/** Every tool the hub serves today, in tools/list order. */
export const HUB_TOOLS: readonly HubTool[] = [healthTool, listCapabilitiesTool, hostsListTool, hostKeyTool, auditCheckpointTool, auditProofTool];
