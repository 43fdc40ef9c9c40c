import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { runInRunningHub } from "../support/hub-process";

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

/** `leasehold token create …`, run inside the hub (its control socket); returns the id and the secret it printed once. */
export async function createTokenViaCli(hub: HubAddress, args: string[]): Promise<{ id: string; secret: string }> {
  const result = await runInRunningHub(hub.dataDir, ["token", "create", ...args]);
  if (result.code !== 0) throw new Error(`token create failed (${result.code}): ${result.stderr}${result.stdout}`);
  const secret = result.stdout.split("\n").find((line) => line.startsWith("lh_"));
  const id = /token ([0-9a-f-]{36}) /.exec(result.stdout)?.[1];
  if (!secret || !id) throw new Error(`unexpected token create output: ${result.stdout}`);
  return { id, secret };
}

/** Per tool: how many results (successes, errors) a connectClient client received and checked against the tool's listed outputSchema. */
export const checkedResults = new Map<string, { ok: number; error: number }>();

/**
 * Lists the tools (so the SDK's client validates every structuredContent
 * against its outputSchema, as a real client does after tools/list) and
 * checks each result again here: that it matches the listed outputSchema
 * — with the SDK's own validator, errors included — and that its text
 * content is non-empty, for clients that read only text. Counts what it
 * checked in `checkedResults`.
 */
/**
 * The SDK's Ajv validator, compiled once per distinct schema and shared by
 * every client of this test process. Ajv caches by schema object, and each
 * tools/list brings new objects: a file that opens dozens of sessions spent
 * most of its CPU compiling the same forty output schemas again, in the SDK
 * client and in checkResults. Same validator, same verdicts.
 */
class SharedSchemaValidator implements jsonSchemaValidator {
  private readonly ajv = new AjvJsonSchemaValidator();
  private readonly compiled = new Map<string, JsonSchemaValidator<unknown>>();

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const key = JSON.stringify(schema);
    let check = this.compiled.get(key);
    if (check === undefined) {
      check = this.ajv.getValidator<unknown>(schema);
      this.compiled.set(key, check);
    }
    return check as JsonSchemaValidator<T>;
  }
}

const schemaValidator = new SharedSchemaValidator();

async function checkResults(client: Client): Promise<void> {
  const validator = schemaValidator;
  const schemas = new Map<string, JsonSchemaValidator<unknown>>();
  for (const tool of (await client.listTools()).tools) {
    if (tool.outputSchema === undefined) throw new Error(`tools/list shows ${tool.name} without an outputSchema`);
    schemas.set(tool.name, validator.getValidator(tool.outputSchema));
  }
  const callTool = client.callTool.bind(client);
  client.callTool = (async (...args: Parameters<Client["callTool"]>) => {
    const result = await callTool(...args);
    const check = schemas.get(args[0].name);
    // A tool this token is not shown (a refusal by name) has no schema to check against.
    if (check === undefined) return result;
    const verdict = check(result.structuredContent);
    if (!verdict.valid) throw new Error(`${args[0].name} result does not match its outputSchema: ${verdict.errorMessage}\n${JSON.stringify(result.structuredContent)}`);
    const text = (result.content as Array<{ type: string; text?: string }>).find((c) => c.type === "text")?.text ?? "";
    if (text.length === 0) throw new Error(`${args[0].name} result has no text content`);
    const counts = checkedResults.get(args[0].name) ?? { ok: 0, error: 0 };
    counts[result.isError === true ? "error" : "ok"] += 1;
    checkedResults.set(args[0].name, counts);
    return result;
  }) as Client["callTool"];
}

/**
 * An SDK client on `/api/mcp`. `capabilities` are what it declares in
 * `initialize`; `configure` runs before it connects (request handlers for
 * what the hub may ask it).
 */
export async function connectClient(
  url: string,
  token: string,
  options: { sessionId?: string; headers?: Record<string, string>; capabilities?: ClientCapabilities; configure?: (client: Client) => void } = {},
) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...options.headers } },
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  });
  const client = new Client({ name: "leasehold-test", version: "1.0.0" }, { capabilities: options.capabilities ?? {}, jsonSchemaValidator: schemaValidator });
  options.configure?.(client);
  await client.connect(transport);
  await checkResults(client);
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
  "action_cancel",
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
  "host_key",
  "hosts_list",
  "lease_acquire",
  "lease_release",
  "lease_status",
  "list_capabilities",
  "rollback",
  "run_code",
  "run_command",
];
export const MUTATING_TOOLS = ["fs_write", "lease_acquire", "lease_release", "rollback", "run_code", "run_command"];
/** What a read-only token sees: no mutating tool. */
export const READ_ONLY_TOOLS = FULL_TOOLS.filter((name) => !MUTATING_TOOLS.includes(name));
