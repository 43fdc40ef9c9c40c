/**
 * The per-token session cap does not lock a token out (docs/design.md#mcp):
 * a client that never ends its sessions (the Inspector CLI opens one per run
 * and leaves it) still gets its 33rd session, because the least recently
 * used idle session is closed to make room — and a session with a call in
 * flight is never the one closed. Real hub (`leasehold start`, PGlite, its
 * local guest), official SDK clients.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInRunningHub, startHub, type RunningHub } from "../support/hub-process";
import { waitFor } from "../guest/support";
import { connectClient, createTokenViaCli } from "./support";

const CAP = 32;

describe("MCP session cap: the least recently used idle session makes room [pglite]", () => {
  let hub: RunningHub;
  const open: Client[] = [];

  beforeAll(async () => {
    // Held calls wait 20 s for a decision: long enough to be in flight while the cap is hit (the test decides sooner).
    // The rate limit is raised so that opening 34 sessions in a row tests the session cap alone.
    hub = await startHub({ LEASEHOLD_MCP_APPROVAL_WAIT_S: "20", LEASEHOLD_MCP_RATE_PER_MINUTE: "20000" });
  }, 90_000);

  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await hub?.stop();
  }, 30_000);

  async function fill(secret: string, n: number): Promise<Client[]> {
    const clients: Client[] = [];
    for (let i = 0; i < n; i += 1) {
      const { client } = await connectClient(hub.url, secret);
      clients.push(client);
      open.push(client);
    }
    return clients;
  }

  const alive = async (client: Client): Promise<boolean> => {
    try {
      await client.callTool({ name: "health", arguments: {} }, CallToolResultSchema, { timeout: 15_000 });
      return true;
    } catch (error) {
      // The SDK reports a closed session as a 404 from the hub.
      if (/404|Session not found/i.test(String(error))) return false;
      throw error;
    }
  };

  it(`the ${CAP + 1}rd fresh session on one token succeeds while the others are idle; the least recently used one is closed`, async () => {
    const { secret } = await createTokenViaCli(hub, ["--name", "many-sessions", "--expires", "1h"]);
    const clients = await fill(secret, CAP);
    // The first-opened session is used again, so the second-opened is now the least recently used.
    expect(await alive(clients[0]!)).toBe(true);
    const { client: extra } = await connectClient(hub.url, secret);
    open.push(extra);
    expect(await alive(extra)).toBe(true);
    expect(await alive(clients[1]!)).toBe(false);
    expect(await alive(clients[0]!)).toBe(true);
    expect(await alive(clients[2]!)).toBe(true);
  }, 120_000);

  it("a session with a call in flight is never the one closed: its held call answers normally", async () => {
    const { secret } = await createTokenViaCli(hub, ["--name", "busy-session", "--expires", "1h"]);
    const clients = await fill(secret, CAP);
    const busy = clients[0]!;
    await waitFor(
      "host local online",
      async () => {
        const r = (await busy.callTool({ name: "hosts_list", arguments: {} }, CallToolResultSchema)) as CallToolResult;
        return (r.structuredContent as { hosts?: Array<{ name: string; online: boolean }> }).hosts?.find((h) => h.name === "local" && h.online);
      },
      60_000,
      300,
    );
    // Session 1 is now the least recently used; session 0 becomes busy with a held call.
    for (const c of clients.slice(2)) expect(await alive(c)).toBe(true);
    let held!: (approvalId: string) => void;
    const heldSeen = new Promise<string>((resolve) => (held = resolve));
    const call = busy.callTool({ name: "run_command", arguments: { host: "local", command: "touch busy-marker" } }, CallToolResultSchema, {
      timeout: 60_000,
      onprogress: (p) => {
        const url = (p as { _meta?: Record<string, unknown> })._meta?.["leasehold/approval_url"];
        const approvalId = typeof url === "string" ? /\/approvals#([0-9a-f-]{36})$/.exec(url)?.[1] : undefined;
        if (/held for a person's approval/.test(p.message ?? "") && approvalId !== undefined) held(approvalId);
      },
    });
    const approvalId = await heldSeen;
    // Two new sessions: the first takes session 1's slot; the second would take session 0's if busy ones counted as idle.
    const { client: extraA } = await connectClient(hub.url, secret);
    const { client: extraB } = await connectClient(hub.url, secret);
    open.push(extraA, extraB);
    // The held call ends on a decision (rather than at the end of its wait): its answer reaches the busy session.
    const denied = await runInRunningHub(hub.dataDir, ["approvals", "deny", approvalId, "--as", "admin", "--reason", "session cap test over"]);
    expect(denied.code, denied.stderr).toBe(0);
    const answer = (await call) as CallToolResult;
    expect(answer.structuredContent, JSON.stringify(answer.structuredContent)).toMatchObject({ code: "APPROVAL_DENIED", message: expect.stringContaining("session cap test over") });
    expect(await alive(busy)).toBe(true);
    expect(await alive(clients[1]!)).toBe(false);
    expect(await alive(clients[2]!)).toBe(false);
    expect(await alive(extraA)).toBe(true);
    expect(await alive(extraB)).toBe(true);
  }, 150_000);
});
