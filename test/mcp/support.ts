import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli } from "../support/hub-process";

/** Env that points the CLI at a running hub (PGlite: through its control socket). */
export interface HubAddress {
  url: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
}

export function cliEnv(hub: HubAddress): Record<string, string | undefined> {
  return { LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port), DATABASE_URL: hub.databaseUrl };
}

/** `leasehold token create …`; returns the id and the secret it printed once. */
export async function createTokenViaCli(hub: HubAddress, args: string[]): Promise<{ id: string; secret: string }> {
  const result = await runCli(["token", "create", ...args], cliEnv(hub));
  if (result.code !== 0) throw new Error(`token create failed (${result.code}): ${result.stderr}${result.stdout}`);
  const secret = result.stdout.split("\n").find((line) => line.startsWith("lh_"));
  const id = /token ([0-9a-f-]{36}) /.exec(result.stdout)?.[1];
  if (!secret || !id) throw new Error(`unexpected token create output: ${result.stdout}`);
  return { id, secret };
}

export async function connectClient(url: string, token: string, options: { sessionId?: string; headers?: Record<string, string> } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...options.headers } },
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  });
  const client = new Client({ name: "leasehold-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

export const RPC_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

export function rawPost(url: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/api/mcp`, {
    method: "POST",
    headers: { ...RPC_HEADERS, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const INITIALIZE = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tools a full token sees on a hub with the built-in capabilities (hub tools, approvals, leases, operations). */
export const FULL_TOOLS = [
  "apk_inspect",
  "apk_preflight",
  "approval_status",
  "approval_wait",
  "artifact_upload",
  "audit_checkpoint",
  "audit_proof",
  "fs_list",
  "fs_read",
  "fs_write",
  "health",
  "host_inspect",
  "hosts_list",
  "lease_acquire",
  "lease_release",
  "lease_status",
  "list_capabilities",
  "run_code",
  "run_command",
];
export const MUTATING_TOOLS = ["fs_write", "lease_acquire", "lease_release", "run_code", "run_command"];
/** What a read-only token sees: no mutating tool. */
export const READ_ONLY_TOOLS = FULL_TOOLS.filter((name) => !MUTATING_TOOLS.includes(name));
