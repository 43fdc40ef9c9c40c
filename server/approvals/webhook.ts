/**
 * The approval notification webhook (optional: LEASEHOLD_WEBHOOK_URL +
 * LEASEHOLD_WEBHOOK_SECRET). Each new held action is POSTed once as a small
 * JSON document:
 *
 *   {"type":"approval.requested","approval_id":…,"action_id":…,"host":…,
 *    "operation":…,"risk":…,"deadline":…,"url":"<public URL>/approvals#<approval id>"}
 *
 * with `X-Leasehold-Signature: sha256=<hex HMAC-SHA256 of the exact body
 * bytes under the secret>`. It carries no command, env or stdin: a receiver
 * (chat, pager) learns only that a decision waits and where; the decision
 * itself always happens signed in, in the browser or the CLI. The strings a
 * caller or an admin chose (host, operation, user and passkey names) have
 * their control, invisible and direction-changing characters written as
 * escapes (server/text `neutraliseOneLine`): a chat client renders a
 * right-to-left override as readily as a browser does.
 *
 * A passkey added to any admin account is announced the same way, so a
 * passkey planted with a stolen session does not go unnoticed:
 *
 *   {"type":"passkey.added","admin":<user name>,"passkey_name":…,
 *    "credential_id":…,"added_at":…,"url":"<public URL>/account"}
 *
 * Delivery is best effort and never in the action's way: one attempt, a
 * timeout (5 s), no retries (a receiver that is down must not turn into a
 * retry storm against it or a queue in the hub), at most 8 deliveries in
 * flight (beyond that a notification is dropped and logged). Failures are
 * logged, never thrown: the held action is already committed and waits
 * whatever the receiver does.
 */
import { createHmac } from "node:crypto";
import { logLine, neutraliseOneLine } from "../text";

export const WEBHOOK_LIMITS = { timeoutMs: 5000, maxInFlight: 8 } as const;
export const SIGNATURE_HEADER = "X-Leasehold-Signature";

export interface HeldNotice {
  approvalId: string;
  actionId: string;
  host: string;
  operation: string;
  risk: string;
  deadline: Date;
}

export interface WebhookOptions {
  url: string;
  secret: string;
  /** The hub's public URL (links point at `<publicUrl>/approvals#<approval id>`). */
  publicUrl: string;
  timeoutMs?: number;
  maxInFlight?: number;
  /** Where failures go (default: one line on stderr). */
  log?: (line: string) => void;
  fetch?: typeof fetch;
}

/** A passkey newly registered on an admin account. */
export interface PasskeyAddedNotice {
  username: string;
  passkeyName: string;
  credentialId: string;
  addedAt: Date;
}

export type DeliveryOutcome = "sent" | "failed" | "dropped";

export interface ApprovalWebhook {
  /** Sends the notice in the background; resolves when the attempt ended (tests await it, the pipeline does not). */
  notify(notice: HeldNotice): Promise<DeliveryOutcome>;
  /** Announces a passkey addition (same delivery rules). */
  passkeyAdded(notice: PasskeyAddedNotice): Promise<DeliveryOutcome>;
}

/** `sha256=<hex>` of the HMAC-SHA256 of `body` under `secret` (what X-Leasehold-Signature carries). */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

export function webhookBody(notice: HeldNotice, publicUrl: string): string {
  return JSON.stringify({
    type: "approval.requested",
    approval_id: notice.approvalId,
    action_id: notice.actionId,
    host: neutraliseOneLine(notice.host).text,
    operation: neutraliseOneLine(notice.operation).text,
    risk: notice.risk,
    deadline: notice.deadline.toISOString(),
    url: `${publicUrl.replace(/\/+$/, "")}/approvals#${notice.approvalId}`,
  });
}

export function passkeyAddedBody(notice: PasskeyAddedNotice, publicUrl: string): string {
  return JSON.stringify({
    type: "passkey.added",
    admin: neutraliseOneLine(notice.username).text,
    passkey_name: neutraliseOneLine(notice.passkeyName).text,
    credential_id: notice.credentialId,
    added_at: notice.addedAt.toISOString(),
    url: `${publicUrl.replace(/\/+$/, "")}/account`,
  });
}

/** The receiver's URL as it may appear in a log line (no credentials, no query). */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "(webhook URL)";
  }
}

export function createApprovalWebhook(options: WebhookOptions): ApprovalWebhook {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_LIMITS.timeoutMs;
  const maxInFlight = options.maxInFlight ?? WEBHOOK_LIMITS.maxInFlight;
  // Every line through the one-line escape: `what` and a receiver's error text are not the hub's own.
  const sink = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (line: string): void => sink(logLine(line));
  const send = options.fetch ?? fetch;
  let inFlight = 0;
  /** One attempt; `what` names the notice in log lines, `shown` where a person still sees it. */
  async function deliver(body: string, what: string, shown: string): Promise<DeliveryOutcome> {
    if (inFlight >= maxInFlight) {
      log(`leasehold: webhook: ${inFlight} deliveries in flight, notice for ${what} dropped (${shown})`);
      return "dropped";
    }
    inFlight += 1;
    try {
      const response = await send(options.url, {
        method: "POST",
        headers: { "content-type": "application/json", [SIGNATURE_HEADER]: webhookSignature(options.secret, body), "user-agent": "leasehold-webhook/1" },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      // Drain so the connection is released; the receiver's answer is not used.
      await response.arrayBuffer().catch(() => undefined);
      if (response.status < 200 || response.status > 299) {
        log(`leasehold: webhook ${shownUrl(options.url)} answered ${response.status} for ${what} (not retried)`);
        return "failed";
      }
      return "sent";
    } catch (error) {
      const reason = (error as Error).name === "TimeoutError" ? `timed out after ${timeoutMs} ms` : (error as Error).message;
      log(`leasehold: webhook ${shownUrl(options.url)} failed for ${what}: ${reason} (not retried)`);
      return "failed";
    } finally {
      inFlight -= 1;
    }
  }
  return {
    notify: (notice) => deliver(webhookBody(notice, options.publicUrl), `approval ${notice.approvalId}`, "the approvals page still shows it"),
    passkeyAdded: (notice) => deliver(passkeyAddedBody(notice, options.publicUrl), `passkey ${notice.credentialId} of ${notice.username}`, "the account page lists it"),
  };
}

const hubWebhooks = new WeakMap<object, ApprovalWebhook>();

/**
 * The hub's webhook for `config` (LEASEHOLD_WEBHOOK_URL + _SECRET), or null
 * when none is configured. One per config object, so its in-flight bound
 * holds across the requests that share it.
 */
export function hubWebhookFor(config: { webhook?: { url: string; secret: string } | null; publicUrl: string }): ApprovalWebhook | null {
  if (config.webhook === undefined || config.webhook === null) return null;
  let hook = hubWebhooks.get(config);
  if (hook === undefined) {
    hook = createApprovalWebhook({ url: config.webhook.url, secret: config.webhook.secret, publicUrl: config.publicUrl });
    hubWebhooks.set(config, hook);
  }
  return hook;
}
