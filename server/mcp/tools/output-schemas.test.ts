/**
 * Every tool's outputSchema, as tools/list shows it (server.ts `listedTool`),
 * against results shaped by the hub's own code (shapeOutcome, toolError, the
 * capability registry's listing), run through the official SDK client over
 * an in-memory transport: the client validates structuredContent against
 * the listed schema, isError results included, and throws on a mismatch.
 * The hub's MCP tests check the real results of a running hub the same way
 * (test/mcp/support.ts `connectClient`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { computeReadiness } from "../../capabilities";
import { LeaseholdError } from "../../errors";
import { listedTool } from "../server";
import { shapeOutcome } from "./actions";
import { servedTools } from "./catalogue";
import { capabilityRegistry } from "./listing";
import { toolError, toolSuccess } from "./result";
import { ACTION_ID, completed, DISPATCHED } from "./test-fixtures";
import { page, type HubTool } from "./tool";

type Structured = Record<string, unknown>;

const NOW = "2026-12-01T00:00:00.000Z";
const LEASE = { lease_id: "20000000-0000-4000-8000-000000000002", host: "h1", mode: "exclusive", holder_id: "holder-1", created_at: NOW, expires_at: NOW, idle_expires_at: NOW };

function actionResults(): Structured[] {
  const base = completed("hello\n");
  const evidence = {
    ...base.result!.evidence,
    inputs: [{ name: "input", sha256: "5".repeat(64), bytes: 1024 }],
    denials: [{ kind: "connect", address: "1.1.1.1", port: 80 }],
    denials_dropped: 1,
    resolved_names: [{ name: "example.org", addresses: ["93.184.215.14"] }],
    tier: null,
    worker_digest: null,
  };
  return [
    shapeOutcome(base),
    shapeOutcome(DISPATCHED),
    shapeOutcome({ ...base, replayed: true, decision: "grant", grant_id: "g1", approval_id: "a1" }),
    // Ran under the observe lease by the token's observe scope, not judged read-only.
    shapeOutcome({ ...base, decision: "observe_scope", sandbox: { lease: "observe", reason: "observe_scope" } }),
    shapeOutcome({ ...base, result: { ...base.result!, evidence, receipt: null, state: "failed", exit: { code: null, signal: "SIGKILL", timed_out: true } } }),
    shapeOutcome({ ...base, result: { ...base.result!, exit: null, structured: null } }),
    // fs_read of a binary page: the bytes as base64 in stdout, the page in structured.
    shapeOutcome(completed("AAECAwQ=", { structured: { path: "a.bin", offset: 0, bytes: 5, total_bytes: 5, has_more: false, terminal_controls: false, encoding: "base64" } })),
    // apk_*: the worker's facts as the operation's result.
    shapeOutcome(completed("", { structured: { facts: { package: "org.example", permissions: ["android.permission.INTERNET"], files: [{ path: "classes.dex", bytes: 10 }] }, states: { manifest: "observed" } } })),
  ];
}

function capabilityPages(): Structured[] {
  const listing = capabilityRegistry()
    .list()
    .map((capability) => {
      const manifest = capabilityRegistry().get(capability.id)?.manifest;
      return { ...capability, readiness: manifest === undefined ? null : computeReadiness(manifest, [], { now: new Date(NOW) }) };
    });
  const first = page(listing, { limit: 2 });
  const all = page(listing, { limit: 200 });
  const past = page(listing, { offset: 1000 });
  return [first, all, past].map(({ items, ...paging }) => ({ capabilities: items, ...paging }));
}

const SUCCESS: Record<string, () => Structured[]> = {
  health: () => [
    {
      status: "ok",
      version: "0.1.0",
      uptime_s: 12.5,
      started_at: NOW,
      database: { kind: "pglite", migrations: { applied: 9, known: 9 }, durability: { synchronous_commit: "on", fsync: "on" } },
      ledger: { origin: "leasehold.example/ledger", key: "k", head: { size: 10, root: "cm9vdA==", checkpoint_age_s: 1 }, integrator: { state: "running", detail: null }, appends: { accepted: 10, failed: 0, slow: 0 } },
      hosts: { enrolled: 1, online: 1, witness_failures: [{ host: "h1", reason: "r" }] },
    },
  ],
  list_capabilities: capabilityPages,
  hosts_list: () => [
    { hosts: [], offset: 0, limit: 50, total: 0, has_more: false },
    {
      hosts: [
        { name: "local", online: true, tier: null, last_report_at: null, capabilities: [{ id: "shell", state: "ready", reasons: [], worker_digest: `sha256:${"a".repeat(64)}` }], host_paths: null, snapshots: [] },
        {
          name: "web-1",
          online: true,
          tier: "B",
          last_report_at: null,
          capabilities: [],
          host_paths: [{ label: "logs", path: "/var/log", mode: "ro" }, { label: "app", path: "/srv/app", mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 1073741824 }],
          snapshots: [{ id: "snap-1", label: "app", created_at: "2026-12-06T07:00:00.000Z", bytes: 10, files: 1, tree_digest: `sha256:${"b".repeat(64)}` }],
        },
      ],
      offset: 0,
      limit: 1,
      total: 3,
      has_more: true,
    },
  ],
  host_key: () => {
    const key = {
      host: "local",
      host_id: "40000000-0000-4000-8000-000000000004",
      removed: false,
      key_id: `sha256:${"6".repeat(64)}`,
      public_key_pem: `-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA${"A".repeat(43)}=\n-----END PUBLIC KEY-----\n`,
      key_digest: `sha256:${"7".repeat(64)}`,
      ledger: { entry_id: "3", leaf_index: 2, event: "enrolled", entry: `{"action_id":null,"data":{"event":"enrolled","key_digest":"sha256:${"7".repeat(64)}"},"type":"host/1"}` },
    };
    return [key, { ...key, host: "web-1", removed: true, ledger: { ...key.ledger, leaf_index: null, event: "key_rotated" } }, { ...key, host: "web-2", ledger: null }];
  },
  audit_checkpoint: () => [{ origin: "o", verifier_key: "v", tree_size: 6, root_hash: "cm9vdA==", created_at: NOW, checkpoint: "o\n6\ncm9vdA==\n\n— o sig\n", cosignatures: [{ line: "— w sig" }] }],
  audit_proof: () => [{ leaf_index: 2, tree_size: 6, leaf_hash: "aA==", proof: ["aA==", "aQ=="], checkpoint: "o\n6\nr\n\n— o sig\n" }],
  approval_status: () => [
    {
      action_id: ACTION_ID,
      operation: "fs_write",
      host: "h1",
      state: "held",
      risk: { level: "high", reasons: [{ level: "high", rule: "r", message: "m", span: { start: 0, end: 1 } }] },
      decision: "hold",
      created_at: NOW,
      approval: { approval_id: "a", state: "pending", deadline: NOW, decided_at: null, reason: null },
      error: null,
      hint: "a person must approve or deny it; approval_wait waits for the decision",
    },
    { action_id: ACTION_ID, operation: "run_command", host: null, state: "failed", risk: { level: "low", reasons: [] }, decision: null, created_at: NOW, approval: null, error: { code: "INTERNAL", message: "m" }, hint: "" },
  ],
  approval_wait: actionResults,
  action_cancel: () => {
    const stopped = shapeOutcome({ ...completed("started\n"), status: "cancelled" });
    const result = stopped.result as Record<string, unknown>;
    return [
      { action_id: ACTION_ID, state: "cancelled", stage: "held", approval_id: "a", job_id: null, hint: "it never ran; approval_wait answers CANCELLED" },
      { action_id: ACTION_ID, state: "stopping", stage: "running", approval_id: null, job_id: "j", hint: "the guest was told to stop it" },
      {
        action_id: ACTION_ID,
        state: "cancelled",
        stage: "running",
        approval_id: null,
        job_id: "j",
        result: { ...result, state: "cancelled", exit: { code: null, signal: "SIGKILL", timed_out: false, cancelled: true, oom_killed: false } },
        evidence: stopped.evidence,
        ledger_entry_id: "12",
        hint: "stopped on its host",
      },
    ];
  },
  lease_acquire: () => [
    { ...LEASE, holder: 'agent token "ci" (session 1234abcd)', mine: true, acquired: true },
    { ...LEASE, mode: "observe", mine: false, acquired: false },
  ],
  lease_release: () => [{ lease_id: LEASE.lease_id, released: true, released_at: NOW }],
  lease_status: () => [{ leases: [] }, { leases: [{ ...LEASE, mine: false }, { ...LEASE, holder: "me", mine: true }] }],
  artifact_upload: () => [
    { sha256: "a".repeat(64), bytes: 10, received: 0, next_offset: 0, complete: false, expires_at: null },
    { sha256: "a".repeat(64), bytes: 10, received: 10, next_offset: 10, complete: true, expires_at: NOW },
  ],
};

/** What a tool returns, whatever it is: capability operations all return the action outcome. */
function successesOf(tool: HubTool): Structured[] {
  const own = SUCCESS[tool.name] ?? (tool.pipelineValidates === true ? actionResults : undefined);
  if (own === undefined) throw new Error(`no result fixtures for ${tool.name}: add some here`);
  return own();
}

const ERRORS: CallToolResult[] = [
  toolError(
    new LeaseholdError("APPROVAL_PENDING", "held", {
      retryable: true,
      hint: "wait",
      details: { action_id: ACTION_ID, approval_id: "b", risk: "high", reasons: [{ rule: "r" }], deadline: NOW },
    }),
  ),
  toolError(new LeaseholdError("HOST_BUSY", "busy", { retryable: true, tier: "hub", details: { holder_id: "x", lease_id: LEASE.lease_id, expires_at: NOW } })),
  toolError(new LeaseholdError("INVALID_ARGUMENT", "bad", { tier: "hub", details: { issues: [{ path: "/x", message: "unknown" }] } })),
  toolError(new LeaseholdError("APPROVAL_DENIED", "denied: not today", { details: { action_id: ACTION_ID, reason: "not today" } })),
  toolError(new Error("boom")),
];

describe("every tool's outputSchema accepts its results and the hub's errors, through the SDK client", () => {
  const tools = servedTools();
  const token = { hosts: null };
  /** tool → the results its calls return, by index in `arguments.case`. */
  const results = new Map<string, CallToolResult[]>();
  let client: Client;
  let server: Server;

  beforeAll(async () => {
    server = new Server({ name: "schemas", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((tool) => listedTool(tool, token)) }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const result = results.get(request.params.name)?.[Number(request.params.arguments?.case)];
      if (result === undefined) throw new Error(`no result ${String(request.params.arguments?.case)} for ${request.params.name}`);
      return result;
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "schema-test", version: "1" });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    for (const t of listed.tools) expect(t.outputSchema, t.name).toMatchObject({ type: "object", anyOf: [expect.any(Object), expect.any(Object)] });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  const call = (name: string, index: number) => client.callTool({ name, arguments: { case: index } });

  it("each tool's successful results validate; their text is the tool's own rendering, no longer than the JSON (or 64 bytes)", async () => {
    for (const tool of tools) {
      const successes = successesOf(tool).map((s) => toolSuccess(s, tool.text));
      results.set(tool.name, successes);
      expect(tool.text, `${tool.name} renders its own text`).toBeDefined();
      for (const [i, expected] of successes.entries()) {
        const got = await call(tool.name, i);
        expect(got.structuredContent, `${tool.name} #${i}`).toEqual(expected.structuredContent);
        const text = (got as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
        expect(text.length, `${tool.name} #${i}`).toBeGreaterThan(0);
        // The checkpoint and proof tools append the JSON to a summary line: their text is the one that is longer.
        expect(text).not.toBe(JSON.stringify(expected.structuredContent));
        if (tool.name !== "audit_checkpoint" && tool.name !== "audit_proof") {
          expect(Buffer.byteLength(text), `${tool.name} #${i}: ${text}`).toBeLessThanOrEqual(Math.max(64, Buffer.byteLength(JSON.stringify(expected.structuredContent))));
        }
      }
    }
  });

  it("each tool's schema accepts the hub's error results (held, busy, invalid, denied, internal)", async () => {
    for (const tool of tools) {
      results.set(tool.name, ERRORS);
      for (const [i, expected] of ERRORS.entries()) {
        const got = await call(tool.name, i);
        expect(got.isError, `${tool.name} #${i}`).toBe(true);
        expect(got.structuredContent).toEqual(expected.structuredContent);
      }
    }
  });

  it("the client rejects an action result whose sandbox names an unknown lease or reason (observe_scope is a listed value, not free text)", async () => {
    const base = completed("x");
    const bad = [
      { lease: "observe", reason: "judged_read_only" },
      { lease: "shared", reason: "observe_scope" },
      { lease: "observe" },
    ];
    results.set("run_command", bad.map((sandbox) => toolSuccess({ ...shapeOutcome({ ...base, decision: "observe_scope" }), sandbox })));
    for (let i = 0; i < bad.length; i += 1) await expect(call("run_command", i), JSON.stringify(bad[i])).rejects.toThrow(/does not match the tool's output schema/);
  });

  it("the client rejects an error result whose code is not a stable code, whose text is over its bound, or whose tier is unknown; toolError keeps within them", async () => {
    const base = toolError(new LeaseholdError("NOT_FOUND", "gone"));
    const bad = [{ code: "SOMETHING_ELSE" }, { message: "m".repeat(5000) }, { hint: "h".repeat(2000) }, { tier: "moon" }];
    results.set("health", bad.map((change) => ({ ...base, structuredContent: { ...base.structuredContent, ...change } })));
    for (let i = 0; i < bad.length; i += 1) await expect(call("health", i), Object.keys(bad[i]!)[0]).rejects.toThrow(/does not match the tool's output schema/);
    // The hub's own error results are cut to the bounds, and a detail of another type is not lifted.
    const long = toolError(new LeaseholdError("INVALID_ARGUMENT", "x".repeat(10_000), { hint: "y".repeat(5_000), details: { action_id: 7, reasons: "not a list", lease_id: "l" } }));
    results.set("health", [long]);
    const got = await call("health", 0);
    const structured = got.structuredContent as Record<string, unknown>;
    expect((structured.message as string).length).toBeLessThanOrEqual(4096);
    expect((structured.hint as string).length).toBeLessThanOrEqual(1024);
    expect(structured).not.toHaveProperty("action_id");
    expect(structured).not.toHaveProperty("reasons");
    expect(structured).toMatchObject({ lease_id: "l", details: { action_id: 7, reasons: "not a list" } });
  });

  it("the client rejects a result that lacks a field its schema requires, success or error (the schemas constrain)", async () => {
    for (const tool of tools) {
      const [first] = successesOf(tool);
      const schema = tool.outputSchema as { required: string[] };
      const { [schema.required[0]!]: _dropped, ...broken } = first!;
      const { hint: _hint, ...brokenError } = ERRORS[0]!.structuredContent!;
      results.set(tool.name, [toolSuccess(broken), { ...ERRORS[0]!, structuredContent: brokenError }]);
      await expect(call(tool.name, 0), tool.name).rejects.toThrow(/does not match the tool's output schema/);
      await expect(call(tool.name, 1), tool.name).rejects.toThrow(/does not match the tool's output schema/);
    }
  });
});
