import { z } from "zod";
import { parseCidrList } from "../http/client-address";

/**
 * Every environment variable the hub reads. A `LEASEHOLD_*` variable that is
 * not listed here is refused at start-up: a typo such as `LEASEHOLD_PROT`
 * must not silently leave the default in force.
 */
export const KNOWN_VARIABLES = [
  "LEASEHOLD_HOST",
  "LEASEHOLD_PORT",
  "LEASEHOLD_DATA_DIR",
  "LEASEHOLD_PUBLIC_URL",
  "DATABASE_URL",
  "LEASEHOLD_MCP_ALLOWED_ORIGINS",
  "LEASEHOLD_MCP_APPROVAL_WAIT_S",
  "LEASEHOLD_MCP_MAX_BODY_BYTES",
  "LEASEHOLD_MCP_MAX_HEADER_BYTES",
  "LEASEHOLD_MCP_MAX_JSON_DEPTH",
  "LEASEHOLD_MCP_MAX_CONCURRENT_REQUESTS",
  "LEASEHOLD_MCP_MAX_STREAMS",
  "LEASEHOLD_MCP_RATE_PER_MINUTE",
  "LEASEHOLD_MCP_SESSION_IDLE_S",
  "LEASEHOLD_MCP_SESSION_MAX_S",
  "LEASEHOLD_MCP_SESSIONS_PER_TOKEN",
  "LEASEHOLD_MCP_MAX_HELD_PER_TOKEN",
  "LEASEHOLD_MCP_CANCEL_HELD_ON_DELETE",
  "LEASEHOLD_APPROVAL_ORPHANED_S",
  "LEASEHOLD_LOCAL_GUEST",
  "LEASEHOLD_JOB_HEARTBEAT_LOST_S",
  "LEASEHOLD_JOB_CLAIM_WAIT_S",
  "LEASEHOLD_JOB_SLOTS_PER_TOKEN",
  "LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES",
  "LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES",
  "LEASEHOLD_OUTPUT_RETENTION_S",
  "LEASEHOLD_ARTIFACT_MAX_BYTES",
  "LEASEHOLD_ARTIFACT_QUOTA_BYTES",
  "LEASEHOLD_PASSKEY_APPROVAL_RISK",
  "LEASEHOLD_FOUR_EYES_CRITICAL",
  "LEASEHOLD_WEBHOOK_URL",
  "LEASEHOLD_WEBHOOK_SECRET",
  "LEASEHOLD_STAGE_TRACE",
  "LEASEHOLD_OAUTH_CLIENT_URL_ALLOW",
  "LEASEHOLD_BPF_TIER",
  "LEASEHOLD_KEY_DIR",
  "LEASEHOLD_TRUSTED_PROXIES",
  "LEASEHOLD_CONNECTIONS_PER_ADDRESS",
  "LEASEHOLD_DRAIN_S",
] as const;

export type KnownVariable = (typeof KNOWN_VARIABLES)[number];

const hostname = z
  .string()
  .min(1, "must not be empty")
  .max(253)
  .regex(/^(?:[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?)$/, "must be an IP address or a host name");

const port = z
  .string()
  .regex(/^\d{1,5}$/, "must be a whole number between 1 and 65535")
  .transform(Number)
  .refine((n) => n >= 1 && n <= 65535, "must be a whole number between 1 and 65535");

const databaseUrl = z
  .string()
  .min(1, "must not be empty (unset it to use the embedded database)")
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.hostname !== "";
    } catch {
      return false;
    }
  }, "must be a postgres:// or postgresql:// URL with a host");

const publicUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === "";
    } catch {
      return false;
    }
  }, "must be an http:// or https:// URL without query or fragment");

/** A whole number within [min, max], written in plain decimal. */
function wholeNumber(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,10}$/, `must be a whole number between ${min} and ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be a whole number between ${min} and ${max}`);
}

/** Comma-separated browser origins (scheme://host[:port]), each exactly as a browser sends it. */
const originList = z
  .string()
  .transform((value) => value.split(",").map((item) => item.trim()).filter((item) => item.length > 0))
  .refine(
    (items) =>
      items.every((item) => {
        try {
          const url = new URL(item);
          return (url.protocol === "http:" || url.protocol === "https:") && url.origin === item;
        } catch {
          return false;
        }
      }),
    "must be a comma-separated list of origins such as https://admin.example.org (scheme, host, optional port; no path)",
  );

const dataDir = z.string().min(1, "must not be empty").max(4096);

/** The raw variables, each optional with its documented default. */
export const environmentSchema = z.object({
  LEASEHOLD_HOST: hostname.default("127.0.0.1"),
  LEASEHOLD_PORT: port.default(8700),
  LEASEHOLD_DATA_DIR: dataDir.default("./.leasehold"),
  LEASEHOLD_PUBLIC_URL: publicUrl.optional(),
  DATABASE_URL: databaseUrl.optional(),
  // MCP surface (docs/design.md#mcp): origins besides the public URL's, waits and limits.
  LEASEHOLD_MCP_ALLOWED_ORIGINS: originList.default([]),
  LEASEHOLD_MCP_APPROVAL_WAIT_S: wholeNumber(0, 600).default(25),
  LEASEHOLD_MCP_MAX_BODY_BYTES: wholeNumber(1024, 64 * 1024 * 1024).default(4 * 1024 * 1024),
  LEASEHOLD_MCP_MAX_HEADER_BYTES: wholeNumber(1024, 16 * 1024).default(8 * 1024),
  LEASEHOLD_MCP_MAX_JSON_DEPTH: wholeNumber(4, 512).default(64),
  LEASEHOLD_MCP_MAX_CONCURRENT_REQUESTS: wholeNumber(1, 10_000).default(32),
  LEASEHOLD_MCP_MAX_STREAMS: wholeNumber(1, 10_000).default(8),
  LEASEHOLD_MCP_RATE_PER_MINUTE: wholeNumber(1, 10_000_000).default(600),
  LEASEHOLD_MCP_SESSION_IDLE_S: wholeNumber(1, 30 * 86_400).default(600),
  LEASEHOLD_MCP_SESSION_MAX_S: wholeNumber(1, 365 * 86_400).default(86_400),
  LEASEHOLD_MCP_SESSIONS_PER_TOKEN: wholeNumber(1, 10_000).default(32),
  // Held actions (awaiting a person) one agent token may have at once; beyond it RATE_LIMITED.
  LEASEHOLD_MCP_MAX_HELD_PER_TOKEN: wholeNumber(1, 10_000).default(20),
  // An agent that ends its MCP session with DELETE withdraws what it left waiting for a person (docs/design.md#cancel).
  LEASEHOLD_MCP_CANCEL_HELD_ON_DELETE: z.enum(["0", "1"], { message: "must be 0 (off) or 1 (on)" }).default("1"),
  // A held action whose waiting mark is this old reads "orphaned" in the queue (server/approvals/liveness.ts
  // reads it there). At least twice the 5 s marking interval, so a client that waits is never shown orphaned.
  LEASEHOLD_APPROVAL_ORPHANED_S: wholeNumber(10, 86_400).default(30),
  // `leasehold start` enrols and runs a guest agent for this machine (host "local") unless "0".
  LEASEHOLD_LOCAL_GUEST: z.enum(["0", "1"], { message: "must be 0 (off) or 1 (on)" }).default("1"),
  // Guest jobs (server/jobs/delivery.ts): how long a running job may go without a heartbeat
  // (guests send one every 2 s) before its outcome is unknown, and how long a queued job waits
  // for its host's guest before HOST_UNAVAILABLE. Longer suits hosts on flaky networks.
  LEASEHOLD_JOB_HEARTBEAT_LOST_S: wholeNumber(6, 3600).default(10),
  LEASEHOLD_JOB_CLAIM_WAIT_S: wholeNumber(1, 3600).default(10),
  // Fair shares (server/dispatch claimJob): running jobs one token (or admin) may hold on one
  // host; keep it below the guest's slot count (4 by default) so another caller always gets one.
  LEASEHOLD_JOB_SLOTS_PER_TOKEN: wholeNumber(1, 1024).default(3),
  // Stored job output (server/jobs/intake.ts): bytes of output chunks kept per token and per
  // host; beyond them the oldest finished jobs' output is pruned (its digest stays sealed in the
  // ledger and its envelope in evidence). Output older than the retention is pruned too.
  LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES: wholeNumber(1024 * 1024, 9_999_999_999).default(256 * 1024 * 1024),
  LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES: wholeNumber(1024 * 1024, 9_999_999_999).default(1024 * 1024 * 1024),
  LEASEHOLD_OUTPUT_RETENTION_S: wholeNumber(60, 10 * 365 * 86_400).default(7 * 86_400),
  // Artifacts (server/artifacts): the largest one file an agent may upload, and the bytes one
  // token (or admin) may hold in uploads, incomplete and complete (each upload counts its
  // declared size from its first chunk; expired uploads stop counting).
  LEASEHOLD_ARTIFACT_MAX_BYTES: wholeNumber(1024, 9_999_999_999).default(128 * 1024 * 1024),
  LEASEHOLD_ARTIFACT_QUOTA_BYTES: wholeNumber(1024, 9_999_999_999).default(512 * 1024 * 1024),
  // Approvals at or above this risk need a passkey signature over the action (server/passkeys);
  // "off" lets a person approve anything without one (the CLI can then approve high-risk actions).
  LEASEHOLD_PASSKEY_APPROVAL_RISK: z.enum(["high", "critical", "off"], { message: "must be high, critical or off" }).default("high"),
  // Four-eyes for critical actions: two different approvers (server/approvals decide()).
  LEASEHOLD_FOUR_EYES_CRITICAL: z.enum(["0", "1"], { message: "must be 0 (off) or 1 (on)" }).default("0"),
  // Approval notifications (server/approvals/webhook.ts): each new held action is POSTed as a
  // small JSON to this URL, signed with HMAC-SHA256 under the secret (X-Leasehold-Signature).
  // Both or neither: a URL without a secret is refused at start-up.
  LEASEHOLD_WEBHOOK_URL: publicUrl.optional(),
  LEASEHOLD_WEBHOOK_SECRET: z.string().min(16, "must be at least 16 characters (a random secret shared with the receiver)").max(1024).optional(),
  // Bench aid (common/trace/stage.ts): an absolute file path the hub and its local guest append
  // per-stage timestamps of every action to (ids and counts only). Off when unset.
  LEASEHOLD_STAGE_TRACE: z.string().startsWith("/", "must be an absolute file path").max(4096).optional(),
  // Read by the guest (native/bpf.ts), which the hub starts with its own environment: listed so
  // the hub does not refuse it, and checked here so a typo fails at start-up rather than in the guest.
  LEASEHOLD_BPF_TIER: z.enum(["A", "B", "C"], { message: "must be A, B or C (a cap: it never raises the tier)" }).optional(),
  // OAuth (server/oauth): host names whose Client ID Metadata Documents may be fetched although
  // they resolve to loopback or private addresses (the SSRF guard refuses those otherwise).
  // Comma-separated; for a client on the hub's own network, or tests. Certificates are still checked.
  LEASEHOLD_OAUTH_CLIENT_URL_ALLOW: z
    .string()
    .max(4096)
    .transform((value) => value.split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== ""))
    .refine((hosts) => hosts.every((h) => /^[a-z0-9.:[\]-]{1,253}$/.test(h)), "must be a comma-separated list of host names or IP addresses")
    .default([]),
  // Replicas (docs/deploy.md): where the hub's private keys live (dispatch/job.key, ledger/log.key);
  // every process on one DATABASE_URL must find the same two. Default: the data directory.
  LEASEHOLD_KEY_DIR: dataDir.optional(),
  // Reverse proxies whose X-Forwarded-For is believed (server/http/client-address.ts), as
  // comma-separated CIDRs or addresses. Unset: the TCP peer is the client, whatever it sends.
  LEASEHOLD_TRUSTED_PROXIES: z
    .string()
    .max(4096)
    .transform((value, ctx) => {
      const parsed = parseCidrList(value);
      if (parsed.ok) return parsed.cidrs;
      ctx.addIssue({ code: "custom", message: `must be a comma-separated list of CIDRs or addresses such as 10.0.0.0/8, 192.0.2.7 (${JSON.stringify(parsed.bad)} is neither)` });
      return z.NEVER;
    })
    .default([]),
  // Open connections one TCP peer may hold (server/hub/listen.ts); behind a proxy every
  // connection is the proxy's, so raise it above the proxy's upstream connection count.
  LEASEHOLD_CONNECTIONS_PER_ADDRESS: wholeNumber(1, 1_000_000).default(64),
  // SIGTERM: how long in-flight requests may run after readiness turns 503 before the process exits.
  LEASEHOLD_DRAIN_S: wholeNumber(0, 3600).default(30),
});

export type Environment = z.output<typeof environmentSchema>;
