// Public surface of server/mcp. Listed by name; see README.md for layering.
export { handleMcpRequest, liveSessionCount, mcpCallsInFlight, serveMcp, whenMcpCallsDone } from "./endpoint";
export { createMcpServer, authInfoFor } from "./server";
export { allowedOrigins, checkDeclaredLength, checkHeaderBytes, checkJsonDepth, checkOrigin, checkSessionIdShape, parseBearer } from "./checks";
export type { Check, Refusal } from "./checks";
export { knownToolNames, visibleTools, decideTool, listedInputSchema, servedTools, PIPELINE_TOOLS } from "./tools/catalogue";
export { operationTool, shapeOutcome } from "./tools/actions";
export { HUB_TOOLS } from "./tools/listing";
export type { HubTool, ToolContext } from "./tools/tool";
export { countLiveSessions, findSession, insertSession, reclaimExpiredSessions, sessionDigest, touchSession } from "./session-store";
export type { StoredSession, SessionLifetimes } from "./session-store";
export { clientSettings } from "./client-settings";
