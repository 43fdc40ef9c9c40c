export { loadConfig, redactDatabaseUrl } from "./load";
export type { ConfigResult, DatabaseConfig, EnvironmentVariables, HubConfig, JobWindows, McpConfig, OutputLimits, WebhookConfig } from "./load";
export { KNOWN_VARIABLES } from "./schema";
export type { KnownVariable } from "./schema";
