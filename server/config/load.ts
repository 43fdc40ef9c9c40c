import path from "node:path";
import type { Cidr } from "../http/client-address";
import { KNOWN_VARIABLES, environmentSchema } from "./schema";

export interface DatabaseConfig {
  /** `pglite`: embedded, in `<dataDir>/pg`. `postgres`: a real server. */
  kind: "pglite" | "postgres";
  url?: string;
  pgliteDir?: string;
}

/** The MCP endpoint's policy knobs (docs/design.md#mcp). */
export interface McpConfig {
  /** Browser origins allowed besides the public URL's own origin. */
  allowedOrigins: string[];
  /** How long a held action waits (with progress) before APPROVAL_PENDING; 0 answers at once. */
  approvalWaitS: number;
  maxBodyBytes: number;
  /** Total bytes of request header names and values the MCP route accepts. */
  maxHeaderBytes: number;
  maxJsonDepth: number;
  /** In-flight POST requests per token, per hub process. */
  maxConcurrentRequests: number;
  /** Open SSE streams (GET) per token, per hub process. */
  maxStreams: number;
  /** Requests per minute per token, per hub process (token bucket, burst = one minute's worth / 4). */
  ratePerMinute: number;
  sessionIdleS: number;
  sessionMaxS: number;
  sessionsPerToken: number;
  /** Actions one token may have held for a person at once (LEASEHOLD_MCP_MAX_HELD_PER_TOKEN); beyond it RATE_LIMITED. */
  maxHeldPerToken: number;
  /** Cancel the session's held actions when the agent ends its session with DELETE (LEASEHOLD_MCP_CANCEL_HELD_ON_DELETE, default on). */
  cancelHeldOnDelete: boolean;
}

export interface HubConfig {
  host: string;
  port: number;
  dataDir: string;
  publicUrl: string;
  database: DatabaseConfig;
  mcp: McpConfig;
  /** Start a guest agent for this machine (host "local") with the hub (LEASEHOLD_LOCAL_GUEST, default on). */
  localGuest: boolean;
  /** Guest job windows (LEASEHOLD_JOB_HEARTBEAT_LOST_S, LEASEHOLD_JOB_CLAIM_WAIT_S) and fair share (LEASEHOLD_JOB_SLOTS_PER_TOKEN). */
  jobs: JobWindows;
  /** Stored output bounds (LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES, LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES, LEASEHOLD_OUTPUT_RETENTION_S). */
  output: OutputLimits;
  /** Artifact bounds (LEASEHOLD_ARTIFACT_MAX_BYTES, LEASEHOLD_ARTIFACT_QUOTA_BYTES). */
  artifacts: { maxBytes: number; quotaBytes: number };
  /** Approvals at or above this risk need a passkey assertion (LEASEHOLD_PASSKEY_APPROVAL_RISK, default high); "off" = never. */
  passkeyApprovalRisk: "high" | "critical" | "off";
  /** A critical action needs two different approvers (LEASEHOLD_FOUR_EYES_CRITICAL=1; default off). */
  fourEyesCritical?: boolean;
  /** Whether LEASEHOLD_PUBLIC_URL was set (otherwise publicUrl is http://HOST:PORT). */
  publicUrlSet?: boolean;
  /** Approval notifications (LEASEHOLD_WEBHOOK_URL + LEASEHOLD_WEBHOOK_SECRET); null when not set. */
  webhook: WebhookConfig | null;
  /** OAuth authorization server settings from the environment (LEASEHOLD_OAUTH_CLIENT_URL_ALLOW). */
  oauth?: { clientUrlAllow: string[] };
  /** Where the hub's private keys live (LEASEHOLD_KEY_DIR; default the data directory). */
  keyDir?: string;
  /** Reverse proxies whose X-Forwarded-For is read (LEASEHOLD_TRUSTED_PROXIES); empty: none. */
  trustedProxies?: Cidr[];
  /** Open connections per TCP peer (LEASEHOLD_CONNECTIONS_PER_ADDRESS, default 64). */
  connectionsPerAddress?: number;
  /** After SIGTERM, how long in-flight requests may finish (LEASEHOLD_DRAIN_S, default 30 s). */
  drainMs?: number;
}

export interface WebhookConfig {
  url: string;
  /** HMAC-SHA256 key for X-Leasehold-Signature. */
  secret: string;
}

export interface OutputLimits {
  /** Bytes of stored job output per token (or admin); the oldest finished jobs' output is pruned beyond it. */
  quotaTokenBytes: number;
  /** Bytes of stored job output per host; the same pruning. */
  quotaHostBytes: number;
  /** Output of jobs finished longer ago than this is pruned (digests stay in the ledger). */
  retentionMs: number;
}

export interface JobWindows {
  /** A claimed job silent this long has an unknown outcome. */
  heartbeatLostMs: number;
  /** A queued job unclaimed this long while its host is offline fails with HOST_UNAVAILABLE. */
  claimWaitMs: number;
  /** Running jobs one caller may hold on one host (fair share of the guest's slots). */
  slotsPerToken: number;
}

export type ConfigResult = { ok: true; config: HubConfig } | { ok: false; variable: string; message: string };

/**
 * Parses the hub's configuration from an environment once, at start-up.
 * Pure: reads only `env` and `cwd`, touches nothing on disk, so a bad value
 * fails before any file or database is created.
 */
export type EnvironmentVariables = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: EnvironmentVariables, cwd: string = process.cwd()): ConfigResult {
  const known = new Set<string>(KNOWN_VARIABLES);
  for (const name of Object.keys(env).sort()) {
    if (name.startsWith("LEASEHOLD_") && !known.has(name)) {
      return {
        ok: false,
        variable: name,
        message: `${name} is not a Leasehold setting (known: ${KNOWN_VARIABLES.filter((v) => v.startsWith("LEASEHOLD_")).join(", ")})`,
      };
    }
  }
  const raw: Record<string, string> = {};
  for (const name of KNOWN_VARIABLES) {
    const value = env[name];
    if (value !== undefined) raw[name] = value;
  }
  const parsed = environmentSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? "environment");
    // Never echo a value that may carry a credential.
    const secretish = variable === "DATABASE_URL" || variable === "LEASEHOLD_WEBHOOK_SECRET" || variable === "LEASEHOLD_WEBHOOK_URL";
    const shown = raw[variable] === undefined || secretish ? "" : ` (got ${JSON.stringify(raw[variable])})`;
    return { ok: false, variable, message: `${variable} ${issue?.message ?? "is invalid"}${shown}` };
  }
  const e = parsed.data;
  const dataDir = path.resolve(cwd, e.LEASEHOLD_DATA_DIR);
  const urlHost = e.LEASEHOLD_HOST.includes(":") && !e.LEASEHOLD_HOST.startsWith("[") ? `[${e.LEASEHOLD_HOST}]` : e.LEASEHOLD_HOST;
  const publicUrl = (e.LEASEHOLD_PUBLIC_URL ?? `http://${urlHost}:${e.LEASEHOLD_PORT}`).replace(/\/+$/, "");
  const database: DatabaseConfig = e.DATABASE_URL
    ? { kind: "postgres", url: e.DATABASE_URL }
    : { kind: "pglite", pgliteDir: path.join(dataDir, "pg") };
  const mcp: McpConfig = {
    allowedOrigins: e.LEASEHOLD_MCP_ALLOWED_ORIGINS,
    approvalWaitS: e.LEASEHOLD_MCP_APPROVAL_WAIT_S,
    maxBodyBytes: e.LEASEHOLD_MCP_MAX_BODY_BYTES,
    maxHeaderBytes: e.LEASEHOLD_MCP_MAX_HEADER_BYTES,
    maxJsonDepth: e.LEASEHOLD_MCP_MAX_JSON_DEPTH,
    maxConcurrentRequests: e.LEASEHOLD_MCP_MAX_CONCURRENT_REQUESTS,
    maxStreams: e.LEASEHOLD_MCP_MAX_STREAMS,
    ratePerMinute: e.LEASEHOLD_MCP_RATE_PER_MINUTE,
    sessionIdleS: e.LEASEHOLD_MCP_SESSION_IDLE_S,
    sessionMaxS: e.LEASEHOLD_MCP_SESSION_MAX_S,
    sessionsPerToken: e.LEASEHOLD_MCP_SESSIONS_PER_TOKEN,
    maxHeldPerToken: e.LEASEHOLD_MCP_MAX_HELD_PER_TOKEN,
    cancelHeldOnDelete: e.LEASEHOLD_MCP_CANCEL_HELD_ON_DELETE === "1",
  };
  const jobs: JobWindows = { heartbeatLostMs: e.LEASEHOLD_JOB_HEARTBEAT_LOST_S * 1000, claimWaitMs: e.LEASEHOLD_JOB_CLAIM_WAIT_S * 1000, slotsPerToken: e.LEASEHOLD_JOB_SLOTS_PER_TOKEN };
  const output: OutputLimits = {
    quotaTokenBytes: e.LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES,
    quotaHostBytes: e.LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES,
    retentionMs: e.LEASEHOLD_OUTPUT_RETENTION_S * 1000,
  };
  const artifacts = { maxBytes: e.LEASEHOLD_ARTIFACT_MAX_BYTES, quotaBytes: e.LEASEHOLD_ARTIFACT_QUOTA_BYTES };
  if ((e.LEASEHOLD_WEBHOOK_URL === undefined) !== (e.LEASEHOLD_WEBHOOK_SECRET === undefined)) {
    const missing = e.LEASEHOLD_WEBHOOK_URL === undefined ? "LEASEHOLD_WEBHOOK_URL" : "LEASEHOLD_WEBHOOK_SECRET";
    return { ok: false, variable: missing, message: `${missing} must be set together with ${missing === "LEASEHOLD_WEBHOOK_URL" ? "LEASEHOLD_WEBHOOK_SECRET" : "LEASEHOLD_WEBHOOK_URL"} (an unsigned or unaddressed webhook is refused)` };
  }
  const webhook: WebhookConfig | null = e.LEASEHOLD_WEBHOOK_URL === undefined || e.LEASEHOLD_WEBHOOK_SECRET === undefined ? null : { url: e.LEASEHOLD_WEBHOOK_URL, secret: e.LEASEHOLD_WEBHOOK_SECRET };
  return { ok: true, config: { host: e.LEASEHOLD_HOST, port: e.LEASEHOLD_PORT, dataDir, publicUrl, database, mcp, localGuest: e.LEASEHOLD_LOCAL_GUEST === "1", jobs, output, artifacts, webhook, oauth: { clientUrlAllow: e.LEASEHOLD_OAUTH_CLIENT_URL_ALLOW }, passkeyApprovalRisk: e.LEASEHOLD_PASSKEY_APPROVAL_RISK, fourEyesCritical: e.LEASEHOLD_FOUR_EYES_CRITICAL === "1", publicUrlSet: e.LEASEHOLD_PUBLIC_URL !== undefined, keyDir: e.LEASEHOLD_KEY_DIR === undefined ? dataDir : path.resolve(cwd, e.LEASEHOLD_KEY_DIR), trustedProxies: e.LEASEHOLD_TRUSTED_PROXIES, connectionsPerAddress: e.LEASEHOLD_CONNECTIONS_PER_ADDRESS, drainMs: e.LEASEHOLD_DRAIN_S * 1000 } };
}

/** A URL safe to print: the password is never shown. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable URL)";
  }
}
