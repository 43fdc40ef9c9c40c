/**
 * An agent for browser tests: the official MCP SDK client with an `lh_`
 * token made by the CLI, against the hub the Playwright config started
 * (which runs a real local guest, host "local").
 */
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { leaseholdCli } from "./admins";
import { E2E_BASE_URL } from "./hub";

let counter = 0;

/** Agents connected and not yet closed in this worker: closeOpenAgents ends what a failed test left holding a lease. */
const open = new Set<Agent>();

export interface Agent {
  client: Client;
  tokenName: string;
  close(): Promise<void>;
}

/** A new token and a connected MCP session for it. */
export async function connectAgent(prefix = "agent"): Promise<Agent> {
  const [agent] = await connectAgents(prefix, 1);
  return agent!;
}

/**
 * A new token and `count` MCP sessions for it, one per call an agent makes
 * at the same time: calls sent together on one session wait until the first
 * of them is answered (a held one only after the hub's approval wait), so a
 * test that holds several actions at once gives each its own session.
 */
export async function connectAgents(prefix: string, count: number): Promise<Agent[]> {
  counter += 1;
  const tokenName = `${prefix}-${process.pid}-${counter}`;
  const out = leaseholdCli(["token", "create", "--name", tokenName, "--expires", "1h"]);
  const secret = out.split("\n").find((line) => line.startsWith("lh_"));
  if (secret === undefined) throw new Error(`no token in: ${out}`);
  return Promise.all(Array.from({ length: count }, () => openSession(secret, tokenName)));
}

async function openSession(secret: string, tokenName: string): Promise<Agent> {
  const transport = new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } });
  const client = new Client({ name: "leasehold-e2e", version: "1.0.0" });
  await client.connect(transport);
  let closing: Promise<void> | undefined;
  const agent: Agent = {
    client,
    tokenName,
    // DELETE the session: its host leases end with it (a closed transport alone keeps them until idle).
    close() {
      closing ??= (async () => {
        open.delete(agent);
        await transport.terminateSession().catch(() => undefined);
        await client.close();
      })();
      return closing;
    },
  };
  open.add(agent);
  return agent;
}

/**
 * Closes every agent this worker connected and did not close: a spec calls
 * it in `test.afterEach`, so a test that fails half-way (its own `close()`
 * never reached) does not leave its session holding host "local" for the
 * tests after it.
 */
export async function closeOpenAgents(): Promise<void> {
  await Promise.all([...open].map((agent) => agent.close()));
}

export function structured(result: CallToolResult): Record<string, unknown> {
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

/**
 * Runs `command` on host "local" and waits for the person's decision: the
 * call waits (with progress) up to the hub's approval wait, and if that
 * passes, `approval_wait` continues until the action is decided and done.
 */
export async function runCommand(agent: Agent, command: string): Promise<CallToolResult> {
  const options = { timeout: 120_000, resetTimeoutOnProgress: true };
  // The same key on a repeat continues the same action (no second approval).
  const call = { name: "run_command", arguments: { host: "local", command, idempotency_key: randomUUID() } };
  let result = (await agent.client.callTool(call, undefined, options)) as CallToolResult;
  for (let i = 0; i < 60; i += 1) {
    const s = structured(result);
    const pending = s["code"] === "APPROVAL_PENDING" || s["status"] === "dispatched";
    // Approved while another session holds the host exclusively (HOST_BUSY, retryable): repeat the call with the same key.
    const busy = s["code"] === "HOST_BUSY";
    if (!pending && !busy) return result;
    if (busy) {
      await new Promise((r) => setTimeout(r, 1000));
      result = (await agent.client.callTool(call, undefined, options)) as CallToolResult;
    } else {
      result = (await agent.client.callTool({ name: "approval_wait", arguments: { action_id: String(s["action_id"]) } }, undefined, options)) as CallToolResult;
    }
  }
  return result;
}
