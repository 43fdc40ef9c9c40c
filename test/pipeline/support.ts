/**
 * Pipeline test fixtures. The readiness check here says "ready" for every
 * capability on every host: that is a test decision only (production
 * readiness comes from host reports, server/actions/readiness.ts).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { asc, eq, sql } from "drizzle-orm";
import { createCapabilityRegistry } from "../../server/capabilities";
import type { Caller, PipelineDeps, PipelineSettings, ReadinessCheck } from "../../server/actions";
import type { CliContext } from "../../server/cli/context";
import type { HubConfig } from "../../server/config";
import type { Database, DatabaseHandle } from "../../server/db";
import { adminUsers, agentTokens, hosts, jobs, actions, ledgerEntries } from "../../server/db/schema";
import { generateJobKey } from "../../server/dispatch";
import { decodeEntry, type LedgerEntry } from "../../server/ledger/entry";

export const readyForTests: ReadinessCheck = { check: () => Promise.resolve({ ready: true }) };

export function testDeps(handle: DatabaseHandle, settings: Partial<PipelineSettings> = {}): PipelineDeps {
  return { handle, registry: createCapabilityRegistry(), readiness: readyForTests, jobKey: generateJobKey(), settings: { approvalPollMs: 200, ...settings } };
}

/**
 * For tests about matching, not about who created a grant: createGrant with
 * the passkey threshold off, so a `high` grant needs no passkey signature
 * (server/policy/grants; the signed path is tested in the grants router).
 */
export const PASSKEY_OFF = { settings: { publicUrl: "", host: "", port: 0, passkeyApprovalRisk: "off" as const } };

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}

/** A dispatched action and its job in `state`, on `hostId`, written directly (no pipeline): for the job lifecycle's own tests. */
export async function insertJob(db: Database, hostId: string, state: "queued" | "claimed" | "completed"): Promise<{ jobId: string; actionId: string }> {
  const actionId = randomUUID();
  const jobId = randomUUID();
  await db.insert(actions).values({ id: actionId, channel: "mcp", callerKey: "token:test", operation: "run_command", capabilityId: "shell", hostId, actionHash: `sha256:${"0".repeat(64)}`, prepared: {}, riskLevel: "read_only", state: "dispatched" });
  await db.insert(jobs).values({ id: jobId, actionId, hostId, payload: {}, signature: "x", state, deadline: new Date(Date.now() + 60_000), claimedBy: state === "queued" ? null : `host:${hostId}`, claimedAt: state === "queued" ? null : new Date() });
  return { jobId, actionId };
}

export async function insertHost(db: Database, name = uniqueName("host")): Promise<{ id: string; name: string }> {
  const [row] = await db.insert(hosts).values({ name, publicKey: "test-key" }).returning({ id: hosts.id, name: hosts.name });
  if (row === undefined) throw new Error("no host row");
  return row;
}

export async function insertAdmin(db: Database, username = uniqueName("admin")): Promise<{ id: string; username: string }> {
  const [row] = await db.insert(adminUsers).values({ username, passwordHash: "test" }).returning({ id: adminUsers.id, username: adminUsers.username });
  if (row === undefined) throw new Error("no admin row");
  return row;
}

export async function insertToken(
  db: Database,
  options: { readOnly?: boolean; observe?: "judged" | "any"; tools?: string[] | null; hosts?: string[] | null; createdBy?: string; sessionId?: string | null } = {},
): Promise<Extract<Caller, { kind: "token" }>> {
  const [row] = await db
    .insert(agentTokens)
    .values({ name: uniqueName("token"), tokenHash: randomBytes(32), readOnly: options.readOnly ?? false, observe: options.observe ?? "judged", tools: options.tools ?? null, hosts: options.hosts ?? null, createdBy: options.createdBy ?? "test" })
    .returning({ id: agentTokens.id });
  if (row === undefined) throw new Error("no token row");
  return {
    kind: "token",
    tokenId: row.id,
    readOnly: options.readOnly ?? false,
    tools: options.tools ?? null,
    hosts: options.hosts ?? null,
    ...(options.observe === undefined ? {} : { observe: options.observe }),
    sessionId: options.sessionId === undefined ? uniqueName("session") : options.sessionId,
    label: "test token",
  };
}

/** Every ledger entry of one action, in append order, decoded. */
export async function entriesOf(db: Database, actionId: string): Promise<LedgerEntry[]> {
  const rows = await db.select({ body: ledgerEntries.body }).from(ledgerEntries).orderBy(asc(ledgerEntries.id));
  return rows
    .map((row) => decodeEntry(row.body))
    .flatMap((decoded) => (decoded.ok ? [decoded.entry] : []))
    .filter((entry) => entry.action_id === actionId);
}

export async function allEntries(db: Database): Promise<LedgerEntry[]> {
  const rows = await db.select({ body: ledgerEntries.body }).from(ledgerEntries).orderBy(asc(ledgerEntries.id));
  return rows.map((row) => decodeEntry(row.body)).flatMap((decoded) => (decoded.ok ? [decoded.entry] : []));
}

/**
 * The test executor (test code only): claims a job for a host like a guest
 * would, and marks it completed with a made-up result. Real execution,
 * evidence and its sealing belong to the guest agent.
 */
export async function completeJob(db: Database, jobId: string, result: Record<string, unknown>): Promise<void> {
  await db.update(jobs).set({ state: "completed", completedAt: new Date(), result }).where(eq(jobs.id, jobId));
  await db.execute(sql`update actions set state = 'completed' where id = (select action_id from jobs where id = ${jobId})`);
}

export async function actionState(db: Database, actionId: string): Promise<string | undefined> {
  const [row] = await db.select({ state: actions.state }).from(actions).where(eq(actions.id, actionId));
  return row?.state;
}

/**
 * A CLI context that runs commands against `handle` and keeps what they
 * print, for tests of the `leasehold` subcommands without a hub process.
 */
export function captureCli(handle: DatabaseHandle): { ctx: CliContext; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const ctx = {
    env: {},
    cwd: process.cwd(),
    out: (line: string) => out.push(line),
    err: (line: string) => err.push(line),
    loadWeb: () => Promise.reject(new Error("no web")),
    withDatabase: <T>(_purpose: string, fn: (d: { config: HubConfig; handle: DatabaseHandle }) => Promise<T>) => fn({ config: {} as HubConfig, handle }),
  } as unknown as CliContext;
  return { ctx, out, err };
}
