import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type ServerNotification, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { validateArguments } from "../capabilities";
import { LeaseholdError } from "../errors";
import type { HubRuntime } from "../hub/runtime";
import { HUB_VERSION } from "../hub/version";
import type { AgentToken } from "../tokens";
import { urlOffer } from "./elicit";
import { sessionDigest } from "./session-store";
import { cancelledByClient } from "./client-cancels";
import { decideTool, listedInputSchema, visibleTools } from "./tools/catalogue";
import { withErrorResult } from "./tools/output-schemas";
import { logToolFailure, toolError, toolSuccess } from "./tools/result";
import { createToolTask, registerTaskHandlers, TASKS_CAPABILITY, type ContextOf } from "./tasks/handlers";
import { asDatabaseUnavailable } from "../db/unavailable";
import type { HubTool, ProgressMeta } from "./tools/tool";

/** How the endpoint hands the authenticated token to the SDK (`extra.authInfo`). */
export function authInfoFor(token: AgentToken): AuthInfo {
  return {
    // The bearer secret never travels further than the endpoint: the SDK sees the token's id.
    token: token.id,
    clientId: token.id,
    scopes: token.readOnly ? ["read"] : ["read", "write"],
    ...(token.expiresAt === null ? {} : { expiresAt: Math.floor(token.expiresAt.getTime() / 1000) }),
    extra: { leaseholdToken: token },
  };
}

function tokenOf(authInfo: AuthInfo | undefined): AgentToken {
  const token = authInfo?.extra?.leaseholdToken as AgentToken | undefined;
  // Unreachable through the endpoint, which authenticates every request first.
  if (token === undefined) throw new LeaseholdError("UNAUTHENTICATED", "request reached a tool without an authenticated token");
  return token;
}

type SendNotification = (notification: ServerNotification) => Promise<void>;

/**
 * `notifications/progress` for one tools/call, on the request's own stream:
 * only when the client sent a progressToken; `progress` increases with each
 * notification (the spec requires it to). Failures to send are ignored — the
 * call's result still goes out.
 */
function progressSender(progressToken: string | number | undefined, send: SendNotification): (message: string, meta?: ProgressMeta) => void {
  if (progressToken === undefined) return () => undefined;
  let progress = 0;
  return (message, meta) => {
    progress += 1;
    send({ method: "notifications/progress", params: { progressToken, progress, message, ...(meta === undefined ? {} : { _meta: { ...meta } }) } }).catch(() => undefined);
  };
}

const INSTRUCTIONS =
  "Leasehold hub. Tools act on enrolled Linux hosts through a policy pipeline; errors are results with structured {code, message, retryable, hint}. Start with hosts_list and list_capabilities. A call held for a person's approval sends progress while it waits, then returns APPROVAL_PENDING with an action_id: continue with approval_wait. Completed actions carry an evidence summary and a ledger receipt to check with audit_proof. A result's text leads with what to act on (an action's exit status and output); its structuredContent, described by the tool's outputSchema, is the whole result.";

/** A tool as tools/list shows it to this token. */
export function listedTool(tool: HubTool, token: Pick<AgentToken, "hosts">): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: listedInputSchema(tool, token) as unknown as Tool["inputSchema"],
    // Clients validate structuredContent against it, error results included (the TS SDK's client does).
    outputSchema: withErrorResult(tool.outputSchema) as Tool["outputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
    // Pipeline tools run as MCP tasks on request (docs/design.md#mcp-tasks); absent means forbidden.
    ...(tool.startTask === undefined ? {} : { execution: { taskSupport: "optional" as const } }),
  };
}

/**
 * One SDK server per MCP session. It keeps no state of its own beyond what
 * `initialize` told it (stored in mcp_sessions, so another hub process can
 * rebuild it); the token is read from each request's authInfo, never
 * remembered from the session's first request.
 */
export function createMcpServer(runtime: HubRuntime): Server {
  const server = new Server({ name: "leasehold", title: "Leasehold", version: HUB_VERSION }, { capabilities: { tools: { listChanged: false }, tasks: TASKS_CAPABILITY }, instructions: INSTRUCTIONS });
  // What this session was already shown (elicit.ts); a cache: a rebuilt session may show a link once more.
  const offered = new Set<string>();
  const contextOf: ContextOf = (extra, progressToken) => ({
    runtime,
    token: tokenOf(extra.authInfo),
    now: new Date(),
    signal: extra.signal,
    sessionDigest: extra.sessionId === undefined ? null : sessionDigest(extra.sessionId),
    progress: progressSender(progressToken, extra.sendNotification),
    clientCancelled: () => cancelledByClient(extra.sessionId === undefined ? null : sessionDigest(extra.sessionId), extra.requestId),
    offerUrl: urlOffer(() => server.getClientCapabilities(), offered, extra.sendRequest, extra.sendNotification),
  });
  registerTaskHandlers(server, contextOf);

  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const token = tokenOf(extra.authInfo);
    return { tools: visibleTools(token).map((tool) => listedTool(tool, token)) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = tokenOf(extra.authInfo);
    const decision = decideTool(token, request.params.name);
    const task = request.params.task;
    if (task !== undefined) {
      // A refusal by name ends the task with the refusal the synchronous call returns.
      const started = decision.ok ? decision : { ok: false as const, refusal: toolError(new LeaseholdError(decision.code, decision.message, { hint: decision.hint, tier: "hub" })) };
      return createToolTask(contextOf(extra, request.params._meta?.progressToken), request.params.name, started, request.params.arguments ?? {}, task);
    }
    if (!decision.ok) return toolError(new LeaseholdError(decision.code, decision.message, { hint: decision.hint, tier: "hub" }));
    const raw = request.params.arguments ?? {};
    const args = decision.tool.pipelineValidates === true ? ({ ok: true, value: raw } as const) : validateArguments({ name: decision.tool.name, input_schema: decision.tool.inputSchema }, raw);
    if (!args.ok) {
      return toolError(
        new LeaseholdError("INVALID_ARGUMENT", `invalid arguments for ${decision.tool.name}: ${args.issues.map((i) => `${i.path || "/"} ${i.message}`).join("; ")}`, {
          tier: "hub",
          details: { issues: args.issues },
        }),
      );
    }
    try {
      return toolSuccess(await decision.tool.run(args.value, contextOf(extra, request.params._meta?.progressToken)), decision.tool.text);
    } catch (error) {
      return toolError(asDatabaseUnavailable(logToolFailure(decision.tool.name, error)));
    }
  });

  return server;
}
