/**
 * The audit explorer's server side on both databases: the tRPC audit router
 * (entries paged and filtered, checkpoints with witness cosignatures, the
 * summary) and GET /api/audit/export, which must authenticate like a
 * procedure and stream the very file `leasehold verify` reads.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { describeEachDatabase } from "../../../test/support/databases";
import { createAdminSession, type AdminRole } from "../../admins";
import { serveAuditExport } from "../../audit/export-http";
import { summarizeData } from "../../audit/explorer";
import type { Database } from "../../db";
import { adminUsers, agentTokens, hosts } from "../../db/schema";
import { hashActor } from "../../ledger/entry";
import type { HubRuntime } from "../../hub/runtime";
import { appendEntry } from "../../ledger/append";
import { decodeBase64Strict } from "../../trust/ledger/base64";
import { registerWitness, submitCosignature } from "../../ledger/cosignatures";
import { exportLedgerToFile } from "../../ledger/export";
import { integrateOnce } from "../../ledger/integrate";
import type { LogKey } from "../../ledger/log-key";
import { SIGNATURE_TYPE, generateSignerKey } from "../../trust/ledger/note";
import { latestCheckpoint, proveConsistency } from "../../ledger/prove";
import { memoryLogKey } from "../../ledger/test/fixtures";
import { sampleEntries } from "../../ledger/testdata/fixtures";
import { runVerify } from "../../ledger/verify-cli";
import { verifyExport } from "../../ledger/verify";
import { initialWitnessState, witnessCosign } from "../../trust/ledger/witness";
import { TRPCError } from "../init";
import { appRouter } from "../root";
import { sessionHeaders } from "./test-callers";

async function integrateAll(db: Database, key: LogKey): Promise<number> {
  for (;;) {
    const r = await integrateOnce(db, key, { batchSize: 7 });
    if (r.kind === "idle") return r.size;
    if (r.kind !== "integrated") throw new Error(`integrator: ${r.kind}`);
  }
}

async function headersFor(db: Database, role: AdminRole, mustChangePassword = false): Promise<Headers> {
  const [row] = await db
    .insert(adminUsers)
    .values({ username: `audit-${role}-${Math.random().toString(36).slice(2, 8)}`, passwordHash: "unused", role, mustChangePassword })
    .returning();
  const session = await createAdminSession(db, row!.id);
  return sessionHeaders(session, { publicUrl: "http://localhost:8803" });
}

describeEachDatabase("audit explorer router and export", (getDb) => {
  const key = memoryLogKey();
  const witness = generateSignerKey("witness.test/audit", SIGNATURE_TYPE.cosignatureV1);
  let runtime: HubRuntime;
  let size = 0;

  const caller = async (role: AdminRole) => {
    return appRouter.createCaller({ runtime, headers: await headersFor(getDb().handle.db, role) });
  };

  // The log every case reads: 40 entries of several types, integrated in batches, the last checkpoint
  // cosigned by a witness. A hook, not a case: the cases run in any order and all need it first.
  beforeAll(async () => {
    const { db } = getDb().handle;
    runtime = { database: { handle: getDb().handle }, config: { publicUrl: "http://localhost:8803", dataDir: "/nonexistent" }, ledger: { key } } as unknown as HubRuntime;
    const samples = sampleEntries();
    for (let i = 0; i < 40; i++) {
      const type = (["decision/1", "approval/1", "evidence/1", "token/1"] as const)[i % 4]!;
      const sample = samples[type];
      await appendEntry(db, { ...sample, time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)), action_id: sample.action_id === null ? null : `act_${i % 8}` });
    }
    await registerWitness(db, witness.verifier, `sha256:${"ab".repeat(32)}`);
    size = await integrateAll(db, key);
    expect(size).toBe(41);
    const head = (await latestCheckpoint(db))!;
    const proof = await proveConsistency(db, 0, head.size);
    const cosigned = witnessCosign(initialWitnessState(key.origin), head.note, proof.proof.map((p) => decodeBase64Strict(p)!), key.verifier, witness.signer, () => 1_767_225_600);
    if (!cosigned.ok) throw new Error(cosigned.reason);
    await submitCosignature(db, head.size, cosigned.line);
  });

  it("entries: newest first, pages that cover every index exactly once, with type, time, action id, actor digest and a data summary", async () => {
    const api = await caller("auditor");
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await api.audit.entries({ limit: 15, ...(before === undefined ? {} : { before }) });
      expect(page.total).toBe(size);
      seen.push(...page.entries.map((e) => e.index));
      if (page.nextBefore === null) break;
      before = page.nextBefore;
    }
    expect(seen).toEqual(Array.from({ length: size }, (_, i) => size - 1 - i));
    const first = (await api.audit.entries({ limit: 1, before: 1 })).entries[0]!;
    expect(first).toMatchObject({ index: 0, type: "decision/1", time: "2026-01-01T00:00:00.000Z", actionId: "act_0" });
    expect(first.actor).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(first.summary).toContain("operation=run_command");
    expect(first.summary).toMatch(/action_hash=sha256:[0-9a-f]{8}…/);
  });

  it("entries: filters by type and by action id (and both), with totals for the filter", async () => {
    const api = await caller("approver");
    const approvals = await api.audit.entries({ type: "approval/1", limit: 200 });
    expect(approvals.total).toBe(10);
    expect(new Set(approvals.entries.map((e) => e.type))).toEqual(new Set(["approval/1"]));
    const act2 = await api.audit.entries({ actionId: "act_2", limit: 200 });
    // act_2 is every 8th entry from 2 (all evidence/1; token/1 entries carry no action id).
    expect(act2.entries.map((e) => e.index).sort((a, b) => a - b)).toEqual([2, 10, 18, 26, 34]);
    expect(act2.entries.every((e) => e.actionId === "act_2" && e.type === "evidence/1")).toBe(true);
    const both = await api.audit.entries({ actionId: "act_1", type: "approval/1", limit: 200 });
    expect(both.entries.map((e) => e.index).sort((a, b) => a - b)).toEqual([1, 9, 17, 25, 33]);
    const error = await api.audit.entries({ type: "nonsense/9", limit: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("BAD_REQUEST");
  });

  it("checkpoints: newest first with their witness cosignatures (name, key id, signed timestamp)", async () => {
    const api = await caller("auditor");
    const all = await api.audit.checkpoints({ limit: 100 });
    const sizes = all.checkpoints.map((c) => c.size);
    expect(sizes[0]).toBe(size);
    expect([...sizes].sort((a, b) => b - a)).toEqual(sizes);
    expect(all.checkpoints[0]!.cosignatures).toEqual([
      expect.objectContaining({ witness: "witness.test/audit", timestamp: 1_767_225_600, keyId: expect.stringMatching(/^[0-9a-f]{8}$/) }),
    ]);
    expect(all.checkpoints.slice(1).every((c) => c.cosignatures.length === 0)).toBe(true);
    const paged = await api.audit.checkpoints({ limit: 2 });
    expect(paged.checkpoints).toHaveLength(2);
    expect(paged.nextBefore).toBe(paged.checkpoints[1]!.size);
    expect((await api.audit.checkpoints({ limit: 2, before: paged.nextBefore! })).checkpoints[0]!.size).toBeLessThan(paged.nextBefore!);
  });

  it("summary: the log's origin and pinned key, counts and the latest checkpoint with its cosignature count", async () => {
    const summary = await (await caller("auditor")).audit.summary();
    expect(summary).toMatchObject({ origin: key.origin, logKey: key.verifier, integrated: size, pending: 0, latestCheckpoint: { size, cosignatures: 1 } });
    expect(summary.entryTypes).toContain("approval/1");
  });

  it("GET /api/audit/export: 401 signed out, 403 before the one-time password is replaced, and for a reader the file `leasehold verify` accepts", async () => {
    const { db } = getDb().handle;
    const url = "http://localhost:8803/api/audit/export";
    const signedOut = await serveAuditExport(runtime, new Request(url));
    expect(signedOut.status).toBe(401);
    expect(await signedOut.json()).toMatchObject({ code: "UNAUTHENTICATED" });
    const fresh = await serveAuditExport(runtime, new Request(url, { headers: await headersFor(db, "auditor", true) }));
    expect(fresh.status).toBe(403);
    // The cookie alone (what another server on the hub's host name receives) is refused, and says why.
    const bare = await headersFor(db, "auditor");
    const cookieOnly = await serveAuditExport(runtime, new Request(url, { headers: { cookie: bare.get("cookie")! } }));
    expect(cookieOnly.status).toBe(401);
    expect(await cookieOnly.json()).toMatchObject({ code: "UNAUTHENTICATED", message: expect.stringContaining("binding secret") });
    const ok = await serveAuditExport(runtime, new Request(url, { headers: await headersFor(db, "auditor") }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-disposition")).toMatch(/^attachment; filename="leasehold-ledger-.*\.jsonl"$/);
    expect(ok.headers.get("x-leasehold-entries")).toBe(String(size));
    const body = new Uint8Array(await ok.arrayBuffer());
    // Byte for byte the file `leasehold ledger export` writes.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-audit-"));
    try {
      const cliFile = path.join(dir, "cli.jsonl");
      await exportLedgerToFile(db, key, cliFile);
      expect(Buffer.from(body).equals(fs.readFileSync(cliFile))).toBe(true);
      const downloaded = path.join(dir, "downloaded.jsonl");
      fs.writeFileSync(downloaded, body);
      let text = "";
      const code = await runVerify(downloaded, key.verifier, { write: (t: string) => (text += t) }, { witnessKeys: [witness.verifier] });
      expect(text).toContain("VERIFIED");
      expect(code).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const report = await verifyExport([body], key.verifier);
    expect(report).toMatchObject({ ok: true, entries: size });
  });
});

describeEachDatabase("audit explorer for people: names, links and filters", (getDb) => {
  const key = memoryLogKey();
  let runtime: HubRuntime;
  let admin: { id: string; username: string };
  let hostId = "";
  let tokenId = "";
  const caller = async () => appRouter.createCaller({ runtime, headers: await headersFor(getDb().handle.db, "auditor") });

  // Real rows the entries' digests and ids were made from: the hub can name them, and only them.
  beforeAll(async () => {
    const { db } = getDb().handle;
    runtime = { database: { handle: getDb().handle }, config: { publicUrl: "http://localhost:8803", dataDir: "/nonexistent" }, ledger: { key } } as unknown as HubRuntime;
    const [a] = await db.insert(adminUsers).values({ username: "alice-audit", passwordHash: "unused", role: "owner" }).returning();
    admin = { id: a!.id, username: a!.username };
    const [h] = await db.insert(hosts).values({ name: "web-1", publicKey: "unused" }).returning();
    hostId = h!.id;
    const [t] = await db.insert(agentTokens).values({ name: "ci-bot", tokenHash: new Uint8Array(32).fill(7), createdBy: "test" }).returning();
    tokenId = t!.id;
    const samples = sampleEntries();
    const actionId = "5f0c2a9e-0000-4000-8000-00000000abcd";
    await appendEntry(db, { ...samples["decision/1"], time: new Date(Date.UTC(2026, 5, 1, 9)), action_id: actionId, actor: hashActor("token", tokenId) });
    const dispatch = samples["dispatch/1"];
    if (dispatch.type !== "dispatch/1") throw new Error("fixture");
    await appendEntry(db, { ...dispatch, time: new Date(Date.UTC(2026, 5, 1, 10)), action_id: actionId, data: { ...dispatch.data, host_id: hostId } });
    await appendEntry(db, {
      type: "admin/1",
      time: new Date(Date.UTC(2026, 5, 2, 9)),
      action_id: null,
      actor: hashActor("admin", admin.id),
      data: { operation: "admin.role", target_digest: hashActor("admin", admin.id), settings_digest: null },
    });
    await appendEntry(db, { ...samples["evidence/1"], time: new Date(Date.UTC(2026, 5, 3, 9)), action_id: "ffff0000-0000-4000-8000-000000000001", actor: `sha256:${"9".repeat(64)}` });
    for (;;) {
      const r = await integrateOnce(db, key, { batchSize: 16 });
      if (r.kind === "idle") break;
      if (r.kind !== "integrated") throw new Error(`integrator: ${r.kind}`);
    }
  });

  it("names actors and ids the hub can recompute (admin, token, host) and leaves an unknown digest a digest", async () => {
    const page = await (await caller()).audit.entries({ limit: 50 });
    const byType = new Map(page.entries.map((e) => [e.type, e]));
    expect(byType.get("decision/1")!.actorName).toMatchObject({ kind: "token", label: "token ci-bot", href: "/tokens" });
    expect(byType.get("admin/1")!.actorName).toMatchObject({ kind: "admin", label: "admin alice-audit" });
    expect(byType.get("admin/1")!.summary).toContain("target_digest=admin alice-audit");
    expect(byType.get("dispatch/1")!.summary).toContain("host_id=host web-1");
    expect(byType.get("dispatch/1")!.actorName).toMatchObject({ kind: "system", label: "system (hub)" });
    expect(byType.get("evidence/1")!.actorName).toBeNull();
    expect(byType.get("evidence/1")!.actor).toBe(`sha256:${"9".repeat(64)}`);
  });

  it("filters by actor name, by stored digest prefix, by an 8-character action id prefix, by time and by text", async () => {
    const api = await caller();
    const types = async (filter: Parameters<typeof api.audit.entries>[0]) => (await api.audit.entries(filter)).entries.map((e) => e.type).sort();
    expect(await types({ limit: 50, actor: "ALICE" })).toEqual(["admin/1"]);
    expect(await types({ limit: 50, actor: "ci-bot" })).toEqual(["decision/1"]);
    expect(await types({ limit: 50, actor: "nobody-by-this-name" })).toEqual([]);
    expect(await types({ limit: 50, actor: `sha256:${"9".repeat(10)}` })).toEqual(["evidence/1"]);
    expect(await types({ limit: 50, actionId: "5f0c2a9e" })).toEqual(["decision/1", "dispatch/1"]);
    expect(await types({ limit: 50, from: "2026-06-01T09:30:00Z", to: "2026-06-02T12:00:00Z" })).toEqual(["admin/1", "dispatch/1"]);
    expect(await types({ limit: 50, text: "ADMIN.ROLE" })).toEqual(["admin/1"]);
    const bad = await api.audit.entries({ limit: 5, from: "yesterday" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TRPCError);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("ISO 8601");
    const short = await api.audit.entries({ limit: 5, actionId: "5f0" }).catch((e: unknown) => e);
    expect((short as TRPCError).code).toBe("BAD_REQUEST");
  });

  it("entry: the stored JSON in full with every name in it, and NOT_FOUND for an index past the log", async () => {
    const api = await caller();
    const admin1 = (await api.audit.entries({ limit: 50, type: "admin/1" })).entries[0]!;
    const detail = await api.audit.entry({ index: admin1.index });
    expect(JSON.parse(detail.json)).toMatchObject({ type: "admin/1", actor: hashActor("admin", admin.id) });
    expect(detail.names).toEqual([expect.objectContaining({ value: hashActor("admin", admin.id), label: "admin alice-audit" })]);
    const missing = await api.audit.entry({ index: 10_000 }).catch((e: unknown) => e);
    expect((missing as TRPCError).code).toBe("NOT_FOUND");
  });
});

describe("summarizeData", () => {
  it("shortens digests and long values and caps the line", () => {
    expect(summarizeData({ a: `sha256:${"0".repeat(64)}`, b: "x".repeat(100), c: 3, d: null })).toBe(`a=sha256:00000000… b=${"x".repeat(39)}… c=3 d=null`);
    expect(summarizeData({ long: "y".repeat(30), more: "z".repeat(30), again: "w".repeat(30), four: "v".repeat(30), five: "u".repeat(30) }).length).toBeLessThanOrEqual(160);
  });
});
