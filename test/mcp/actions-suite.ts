/**
 * Capability operations, held actions, approvals and leases over MCP, with
 * the SDK's own client against the real hub (`leasehold start`), on PGlite
 * and on a real PostgreSQL server.
 *
 * No guest agent runs here (LEASEHOLD_LOCAL_GUEST=0): the test writes host
 * rows whose stored report (`hosts.health.report`, what
 * `hostReportReadiness` reads) says every built-in worker is ready, the way a
 * guest's health report would. Jobs are therefore dispatched and never
 * completed, so a call answers with the honest dispatched state after its
 * wait budget. With PGlite the hub owns the database: the test writes rows
 * while the hub is stopped, and approves / denies with the CLI's commands run
 * inside the hub (its control socket).
 */
import path from "node:path";
import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ElicitRequestSchema, type CallToolResult, type ElicitRequest, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_REASON_MAX_CHARS } from "../../server/actions";
import { approve, deny, listApprovals } from "../../server/approvals";
import { createCapabilityRegistry } from "../../server/capabilities";
import { KERNEL_FEATURES } from "../../server/trust/kernel-requirements";
import { openPglite, openPostgres, type Database, type DatabaseHandle, type DatabaseKind } from "../../server/db";
import { adminUsers, approvals, hosts } from "../../server/db/schema";
import { hubDatabaseFor, seedPgliteDataDir, testPostgresUrl } from "../support/databases";
import { runInRunningHub, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { connectClient, createTokenViaCli, FULL_TOOLS, rawPost, READ_ONLY_TOOLS, type HubAddress } from "./support";

/** A held call waits this long for a decision, then as long again (at least 5 s) for the host's result. */
const APPROVAL_WAIT_S = 3;
const HOSTS = ["h1", "h2", "h3", "h4", "h5"];
const ADMIN = "approver";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Structured = Record<string, unknown> & { code?: string; message?: string; action_id?: string };

function structured(result: unknown): Structured {
  return ((result as CallToolResult).structuredContent ?? {}) as Structured;
}

/** A report as a guest would store it: every built-in worker present, self-tested, tier A. */
function readyHealth(name: string): Record<string, unknown> {
  const workers = new Map<string, { capability: string; capability_api: number; worker_abi: number; version: string; digest: string; self_test: "pass" }>();
  for (const { manifest } of createCapabilityRegistry().activeOperations()) {
    workers.set(manifest.id, { capability: manifest.id, capability_api: manifest.capability_api, worker_abi: manifest.worker_abi, version: manifest.version, digest: `sha256:${"ab".repeat(32)}`, self_test: "pass" });
  }
  return {
    report: {
      host: name,
      online: true,
      // Fresh for the whole run (readiness refuses reports older than 120 s): no guest renews it.
      reported_at: new Date(Date.now() + 3600_000).toISOString(),
      tier: "A",
      kernel_features: [...KERNEL_FEATURES],
      workers: [...workers.values()],
    },
    probe: { seeded_by: "test/mcp/actions-suite.ts" },
    witness: { size: 0, failure: null },
    accepting_jobs: true,
    guest_version: "test",
  };
}

async function seed(db: Database): Promise<void> {
  for (const name of HOSTS) await db.insert(hosts).values({ name, publicKey: `test-key-${randomBytes(4).toString("hex")}`, enforcementTier: "A", health: readyHealth(name) });
  await db.insert(adminUsers).values({ username: ADMIN, passwordHash: "not-a-login" });
}

export function defineMcpActionSuite(kind: DatabaseKind): void {
  describe(`MCP actions, approvals and leases on a real hub [${kind}]`, () => {
    if (kind === "postgres" && !testPostgresUrl()) {
      it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
        throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
      });
      return;
    }
    let hub: RunningHub;
    let address: HubAddress;
    let env: Record<string, string | undefined>;
    let drop: (() => Promise<void>) | undefined;
    /** PostgreSQL: the test's own connection (the hub is another process on the same server). */
    let pg: DatabaseHandle | undefined;
    const tokens: Record<"full" | "reader" | "scoped" | "other", { id: string; secret: string }> = {} as never;

    /** Changes rows behind the hub: directly on PostgreSQL; on PGlite the hub is stopped, the rows written, the hub started again. */
    async function editDatabase(fn: (db: Database) => Promise<void>): Promise<void> {
      if (pg !== undefined) return fn(pg.db);
      await hub.stop();
      const handle = await openPglite(path.join(hub.dataDir, "pg"));
      try {
        await fn(handle.db);
      } finally {
        await handle.close();
      }
      hub = await startHub({ ...env, LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port) });
    }

    /**
     * The pending approval on `host` — of `actionId` when given: other cases may leave pending
     * approvals on the same host, and the suite runs in shuffled order.
     */
    async function pendingApprovalOn(host: string, actionId?: string): Promise<string> {
      for (let i = 0; i < 50; i++) {
        if (pg !== undefined) {
          const found = (await listApprovals(pg.db)).find((a) => a.host === host && (actionId === undefined || a.action_id === actionId));
          if (found) return found.id;
        } else if (actionId !== undefined) {
          // `approvals show` takes the action id and prints the approval id first.
          const shown = await runInRunningHub(address.dataDir, ["approvals", "show", actionId]);
          const id = /^([0-9a-f-]{36})/.exec(shown.stdout.trim())?.[1];
          if (shown.code === 0 && id !== undefined) return id;
        } else {
          const listed = await runInRunningHub(address.dataDir, ["approvals", "list"]);
          const line = listed.stdout.split("\n").find((l) => l.includes(` on ${host} `));
          if (line) return line.split(/\s+/)[0] as string;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no pending approval on ${host}${actionId === undefined ? "" : ` for action ${actionId}`}`);
    }

    async function decide(approvalId: string, verdict: "approve" | "deny", reason?: string): Promise<void> {
      if (pg !== undefined) {
        const [admin] = await pg.db.select({ id: adminUsers.id, username: adminUsers.username }).from(adminUsers).where(eq(adminUsers.username, ADMIN));
        if (verdict === "approve") await approve(pg.db, approvalId, admin!);
        else await deny(pg.db, approvalId, admin!, reason ?? "no");
        return;
      }
      const result = await runInRunningHub(address.dataDir, ["approvals", verdict, approvalId, "--as", ADMIN, ...(reason === undefined ? [] : ["--reason", reason])]);
      if (result.code !== 0) throw new Error(`approvals ${verdict} failed: ${result.stderr}${result.stdout}`);
    }

    /** tools/call with a progress token; returns the result and the progress notifications it got. */
    async function callWithProgress(client: Client, name: string, args: Record<string, unknown>, onFirst?: () => Promise<void>) {
      const progress: Progress[] = [];
      let first: Promise<void> | undefined;
      const result = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
        timeout: 60_000,
        onprogress: (p) => {
          progress.push(p);
          if (onFirst !== undefined) first ??= onFirst();
        },
      });
      await first;
      return { result, progress };
    }

    beforeAll(async () => {
      const database = await hubDatabaseFor(kind);
      const databaseUrl = database.url;
      drop = database.drop;
      env = { DATABASE_URL: databaseUrl, LEASEHOLD_LOCAL_GUEST: "0", LEASEHOLD_MCP_APPROVAL_WAIT_S: String(APPROVAL_WAIT_S), LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000" };
      if (databaseUrl !== undefined) {
        hub = await startHub(env);
        pg = await openPostgres(databaseUrl, { max: 4 });
        await seed(pg.db);
      } else {
        // PGlite: the rows are written into the data directory before the hub's first start, which saves a restart.
        const dataDir = path.join(tempDir(), "data");
        await seedPgliteDataDir(dataDir);
        const handle = await openPglite(path.join(dataDir, "pg"));
        try {
          await seed(handle.db);
        } finally {
          await handle.close();
        }
        hub = await startHub({ ...env, LEASEHOLD_DATA_DIR: dataDir });
      }
      address = { url: hub.url, port: hub.port, dataDir: hub.dataDir, ...(databaseUrl === undefined ? {} : { databaseUrl }) };
      const created = await Promise.all([
        createTokenViaCli(address, ["--name", "full", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "reader", "--read-only", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "scoped", "--tools", "run_command,approval_status,lease_status", "--hosts", "h1", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "other", "--expires", "1d"]),
      ]);
      [tokens.full, tokens.reader, tokens.scoped, tokens.other] = created as [never, never, never, never];
    }, 120_000);

    afterAll(async () => {
      await hub?.stop();
      await pg?.close();
      await drop?.();
    });

    /** host_inspect (read_only risk → auto-allowed) by the read-only token. */
    async function autoAllowedAction(): Promise<{ elapsedMs: number }> {
      const reader = await connectClient(hub.url, tokens.reader.secret);
      const started = Date.now();
      const { result, progress } = await callWithProgress(reader.client, "host_inspect", { host: "h1" });
      expect(result.isError ?? false).toBe(false);
      const s = structured(result);
      expect(s).toMatchObject({ status: "dispatched", operation: "host_inspect", host: "h1", decision: "auto_allow", risk: { level: "read_only" }, approval_id: null, replayed: false });
      expect(s.action_id).toMatch(UUID);
      expect(s.result).toBeUndefined();
      expect(s.hint).toMatch(/approval_wait/);
      expect(progress.some((p) => /result/.test(p.message ?? ""))).toBe(true);
      const status = await reader.client.callTool({ name: "approval_status", arguments: { action_id: s.action_id } });
      expect(structured(status)).toMatchObject({ action_id: s.action_id, state: "dispatched", approval: null });
      await reader.client.close();
      return { elapsedMs: Date.now() - started };
    }

    /** fs_write (low risk → held) by the full token, approved on the first progress notification. */
    async function heldAndApproved(): Promise<string> {
      const { client } = await connectClient(hub.url, tokens.full.secret);
      const { result, progress } = await callWithProgress(client, "fs_write", { host: "h1", path: "approved.txt", content: "yes" }, async () => decide(await pendingApprovalOn("h1"), "approve"));
      let final = result;
      // The CLI may take longer than the wait: the call then answers APPROVAL_PENDING and approval_wait picks it up.
      if (structured(final).code === "APPROVAL_PENDING") final = await client.callTool({ name: "approval_wait", arguments: { action_id: structured(final).action_id } }, CallToolResultSchema, { timeout: 60_000 });
      expect(final.isError ?? false).toBe(false);
      const s = structured(final);
      expect(s).toMatchObject({ status: "dispatched", operation: "fs_write", host: "h1", decision: "approved", approval_id: expect.stringMatching(UUID), lease_id: expect.stringMatching(UUID) });
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]!.message).toMatch(/held for a person's approval/);
      expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
      const status = await client.callTool({ name: "approval_status", arguments: { action_id: s.action_id } });
      expect(structured(status)).toMatchObject({ state: "dispatched", approval: { state: "approved" } });
      // Another token cannot see it.
      const other = await connectClient(hub.url, tokens.other.secret);
      expect(structured(await other.client.callTool({ name: "approval_status", arguments: { action_id: s.action_id } }))).toMatchObject({ code: "NOT_FOUND" });
      expect(structured(await other.client.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }))).toMatchObject({ code: "NOT_FOUND" });
      await Promise.all([client.close(), other.client.close()]);
      return "ok";
    }

    it("tools/list shows the capability operations per token scope, with manifest schemas and annotations; a read-only token is refused one by name", async () => {
      const registry = createCapabilityRegistry();
      const full = await connectClient(hub.url, tokens.full.secret);
      const listed = (await full.client.listTools()).tools;
      expect(listed.map((t) => t.name).sort()).toEqual(FULL_TOOLS);
      for (const { operation } of registry.activeOperations()) {
        const tool = listed.find((t) => t.name === operation.name)!;
        // The manifest's schema; a mutating operation's also lists the agent's one-line `reason`.
        const { reason, ...manifestProperties } = (tool.inputSchema.properties ?? {}) as Record<string, unknown>;
        expect({ ...tool.inputSchema, properties: manifestProperties }, operation.name).toEqual(operation.input_schema);
        expect(reason, operation.name).toEqual(operation.mutating ? { type: "string", minLength: 1, maxLength: AGENT_REASON_MAX_CHARS, description: expect.stringContaining("why") } : undefined);
        expect(tool.annotations, operation.name).toMatchObject({ readOnlyHint: !operation.mutating, destructiveHint: operation.mutating });
      }

      const reader = await connectClient(hub.url, tokens.reader.secret);
      expect((await reader.client.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_ONLY_TOOLS);
      await expect(reader.client.callTool({ name: "run_command", arguments: { host: "h1", command: "touch x" } })).rejects.toThrow(/403|insufficient|read-only/i);
      const refused = await rawPost(hub.url, tokens.reader.secret, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "lease_acquire", arguments: { host: "h1" } } }, { "mcp-session-id": reader.transport.sessionId! });
      expect(refused.status).toBe(403);

      // --tools and --hosts: only those tools; the host scope is shown as an enum and enforced by the pipeline.
      const scoped = await connectClient(hub.url, tokens.scoped.secret);
      const scopedTools = (await scoped.client.listTools()).tools;
      expect(scopedTools.map((t) => t.name).sort()).toEqual(["approval_status", "lease_status", "run_command"]);
      expect((scopedTools.find((t) => t.name === "run_command")!.inputSchema.properties as Record<string, { enum?: string[] }>).host!.enum).toEqual(["h1"]);
      const outside = await scoped.client.callTool({ name: "run_command", arguments: { host: "h2", command: "ls" } });
      expect(outside.isError).toBe(true);
      expect(structured(outside)).toMatchObject({ code: "FORBIDDEN", retryable: false });
      const bad = await full.client.callTool({ name: "run_command", arguments: { host: "h1", command: "ls", shell: "zsh" } });
      expect(structured(bad)).toMatchObject({ code: "INVALID_ARGUMENT", retryable: false });
      const nowhere = await full.client.callTool({ name: "host_inspect", arguments: { host: "nowhere" } });
      expect(structured(nowhere)).toMatchObject({ code: "NOT_FOUND" });
      await Promise.all([full.client.close(), reader.client.close(), scoped.client.close()]);
    });

    it("a held action: the client gets progress while it waits, the test approves it, the client gets the dispatched result; meanwhile an auto-allowed action is dispatched and, with no guest to run it, answered honestly after its wait budget", async () => {
      const [autoAllowed, heldResult] = await Promise.all([autoAllowedAction(), heldAndApproved()]);
      expect(autoAllowed.elapsedMs).toBeGreaterThanOrEqual((APPROVAL_WAIT_S + 5) * 1000 - 500);
      expect(heldResult).toBe("ok");
    }, 60_000);

    it("URL elicitation: a client declaring elicitation.url is sent the held action's card URL once (mode url), declining changes nothing — approved in the browser, the action proceeds; a client without the capability is sent none", async () => {
      const asked: ElicitRequest["params"][] = [];
      let seen: () => void = () => undefined;
      const firstAsk = new Promise<void>((resolve) => (seen = resolve));
      const capable = await connectClient(hub.url, tokens.full.secret, {
        capabilities: { elicitation: { url: {} } },
        configure: (client) =>
          client.setRequestHandler(ElicitRequestSchema, (request) => {
            asked.push(request.params);
            seen();
            return { action: "decline" };
          }),
      });
      const call = callWithProgress(capable.client, "fs_write", { host: "h5", path: "elicited.txt", content: "card" });
      await firstAsk;
      expect(asked).toHaveLength(1);
      const offer = asked[0] as { mode?: string; url?: string; elicitationId?: string; message?: string };
      expect(offer.mode).toBe("url");
      expect(offer.elicitationId).toMatch(UUID);
      const approvalId = /\/approvals#([0-9a-f-]{36})$/.exec(offer.url ?? "")?.[1];
      expect(approvalId, offer.url).toMatch(UUID);
      expect(new URL(offer.url!).origin).toBe(new URL(hub.url).origin);
      // The client declined; a person approves the card it was offered, and the call goes on.
      await decide(approvalId!, "approve");
      const answered = await call;
      const progress = answered.progress;
      let result = answered.result;
      // The same card the progress notifications name.
      const progressUrl = progress.map((p) => (p as unknown as { _meta?: Record<string, unknown> })._meta?.["leasehold/approval_url"]).find((u) => typeof u === "string");
      expect(progressUrl).toBe(offer.url);
      if (structured(result).code === "APPROVAL_PENDING") {
        result = await capable.client.callTool({ name: "approval_wait", arguments: { action_id: structured(result).action_id } }, CallToolResultSchema, { timeout: 60_000 });
      }
      expect(structured(result)).toMatchObject({ status: "dispatched", decision: "approved", approval_id: approvalId });
      // approval_wait on the same session offers the same card no second time.
      expect(asked).toHaveLength(1);
      await capable.client.close();

      const unasked: unknown[] = [];
      const plain = await connectClient(hub.url, tokens.full.secret, {
        capabilities: { elicitation: {} },
        configure: (client) => {
          client.fallbackRequestHandler = async (request) => {
            unasked.push(request);
            return {};
          };
          client.setRequestHandler(ElicitRequestSchema, (request) => {
            unasked.push(request);
            return { action: "cancel" };
          });
        },
      });
      const held = await callWithProgress(plain.client, "fs_write", { host: "h5", path: "not-elicited.txt", content: "none" });
      expect(structured(held.result)).toMatchObject({ code: "APPROVAL_PENDING" });
      expect(held.progress.length).toBeGreaterThanOrEqual(1);
      expect(unasked).toEqual([]);
      await decide(await pendingApprovalOn("h5", structured(held.result).action_id), "deny", "test over");
      await plain.client.close();
    }, 90_000);

    it("APPROVAL_PENDING carries action_id, risk, reasons and deadline; denial → APPROVAL_DENIED with the reason; expiry → APPROVAL_EXPIRED", async () => {
      const { client, transport } = await connectClient(hub.url, tokens.full.secret);
      const [toDeny, toExpire] = await Promise.all([
        callWithProgress(client, "fs_write", { host: "h2", path: "denied.txt", content: "no" }),
        callWithProgress(client, "fs_write", { host: "h3", path: "expired.txt", content: "late" }),
      ]);
      for (const held of [toDeny, toExpire]) {
        expect(held.result.isError).toBe(true);
        expect(structured(held.result)).toMatchObject({ code: "APPROVAL_PENDING", retryable: true, action_id: expect.stringMatching(UUID), risk: expect.any(String), reasons: expect.any(Array), deadline: expect.any(String) });
        expect(held.progress.length).toBeGreaterThanOrEqual(1);
      }
      const deniedId = structured(toDeny.result).action_id!;
      const expiringId = structured(toExpire.result).action_id!;
      expect(structured(await client.callTool({ name: "approval_status", arguments: { action_id: deniedId } }))).toMatchObject({ state: "held", approval: { state: "pending" } });

      await decide(await pendingApprovalOn("h2", deniedId), "deny", "not on a Friday");
      const denied = await client.callTool({ name: "approval_wait", arguments: { action_id: deniedId } });
      expect(denied.isError).toBe(true);
      expect(structured(denied)).toMatchObject({ code: "APPROVAL_DENIED", retryable: false, action_id: deniedId });
      expect(structured(denied).message).toContain("not on a Friday");
      expect(structured(await client.callTool({ name: "approval_status", arguments: { action_id: deniedId } }))).toMatchObject({ state: "denied", approval: { state: "denied", reason: "not on a Friday" } });

      // The hub's approval deadline is 5 minutes and not configurable: move this one's into the past.
      const approvalId = await pendingApprovalOn("h3", expiringId);
      const sessionId = transport.sessionId!;
      await editDatabase(async (db) => {
        await db.update(approvals).set({ deadline: sql`now() - interval '1 second'` }).where(eq(approvals.id, approvalId));
      });
      // On PGlite the hub restarted: the MCP session, stored in the database, continues on the new process.
      const again = await connectClient(hub.url, tokens.full.secret, { sessionId });
      const expired = await again.client.callTool({ name: "approval_wait", arguments: { action_id: expiringId } });
      expect(expired.isError).toBe(true);
      expect(structured(expired)).toMatchObject({ code: "APPROVAL_EXPIRED", action_id: expiringId });
      expect(structured(await again.client.callTool({ name: "approval_status", arguments: { action_id: expiringId } }))).toMatchObject({ state: "expired" });
      await client.close().catch(() => undefined);
      await again.client.close();
    }, 90_000);

    // Inside the hub the bash parser runs in the Next.js server bundle (it once failed to load there).
    it("run_command through the hub is assessed like any action (held for approval: APPROVAL_PENDING)", async () => {
      const { client } = await connectClient(hub.url, tokens.full.secret);
      const held = await client.callTool({ name: "run_command", arguments: { host: "h2", command: "touch parser-check" } });
      await client.close();
      expect(structured(held)).toMatchObject({ code: "APPROVAL_PENDING" });
    }, 30_000);

    it("leases: acquire, HOST_BUSY with an opaque holder id and its end, not the token name (retryable), status, release; ending the MCP session releases its leases", async () => {
      const owner = await connectClient(hub.url, tokens.other.secret);
      const taken = await owner.client.callTool({ name: "lease_acquire", arguments: { host: "h4", ttl_s: 600 } });
      expect(taken.isError ?? false).toBe(false);
      expect(structured(taken)).toMatchObject({ host: "h4", mode: "exclusive", mine: true, acquired: true, lease_id: expect.stringMatching(UUID) });
      expect(structured(await owner.client.callTool({ name: "lease_acquire", arguments: { host: "h4" } }))).toMatchObject({ acquired: false, lease_id: structured(taken).lease_id });

      const { client, transport } = await connectClient(hub.url, tokens.full.secret);
      const busy = await client.callTool({ name: "lease_acquire", arguments: { host: "h4" } });
      expect(busy.isError).toBe(true);
      expect(structured(busy)).toMatchObject({ code: "HOST_BUSY", retryable: true, holder_id: expect.stringMatching(/^holder_[0-9a-f]{16}$/), expires_at: structured(taken).expires_at });
      expect(JSON.stringify(structured(busy))).not.toContain('"other"');
      const status = await client.callTool({ name: "lease_status", arguments: { host: "h4" } });
      expect((structured(status).leases as unknown[]).length).toBe(1);
      expect(structured(status)).toMatchObject({ leases: [{ host: "h4", mode: "exclusive", mine: false, holder_id: structured(busy).holder_id }] });
      expect(JSON.stringify(structured(status))).not.toContain('"other"');
      const observe = await client.callTool({ name: "lease_acquire", arguments: { host: "h4", mode: "observe" } });
      expect(structured(observe)).toMatchObject({ mode: "observe", acquired: true });
      expect(structured(await client.callTool({ name: "lease_release", arguments: { lease_id: structured(taken).lease_id } }))).toMatchObject({ code: "NOT_FOUND" });

      // The owner's session ends (DELETE): its lease goes with it.
      await owner.transport.terminateSession();
      await owner.client.close();
      const mine = await client.callTool({ name: "lease_acquire", arguments: { host: "h4" } });
      expect(structured(mine)).toMatchObject({ mode: "exclusive", mine: true, acquired: true });
      const released = await client.callTool({ name: "lease_release", arguments: { lease_id: structured(mine).lease_id } });
      expect(structured(released)).toMatchObject({ released: true });
      expect(structured(await client.callTool({ name: "lease_release", arguments: { lease_id: structured(mine).lease_id } }))).toMatchObject({ code: "NOT_FOUND" });
      await transport.terminateSession();
      await client.close();
    });
  });
}
