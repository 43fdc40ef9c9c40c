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
 * itself always happens signed in, in the browser or the CLI.
 *
 * Delivery is best effort and never in the action's way: one attempt, a
 * timeout (5 s), no retries (a receiver that is down must not turn into a
 * retry storm against it or a queue in the hub), at most 8 deliveries in
 * flight (beyond that a notification is dropped and logged). Failures are
 * logged, never thrown: the held action is already committed and waits
 * whatever the receiver does.
 */
import { createHmac } from "node:crypto";

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

export interface ApprovalWebhook {
  /** Sends the notice in the background; resolves when the attempt ended (tests await it, the pipeline does not). */
  notify(notice: HeldNotice): Promise<"sent" | "failed" | "dropped">;
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
    host: notice.host,
    operation: notice.operation,
    risk: notice.risk,
    deadline: notice.deadline.toISOString(),
    url: `${publicUrl.replace(/\/+$/, "")}/approvals#${notice.approvalId}`,
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
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const send = options.fetch ?? fetch;
  let inFlight = 0;
  return {
    async notify(notice) {
      if (inFlight >= maxInFlight) {
        log(`leasehold: approval webhook: ${inFlight} deliveries in flight, notice for approval ${notice.approvalId} dropped (the approvals page still shows it)`);
        return "dropped";
      }
      inFlight += 1;
      const body = webhookBody(notice, options.publicUrl);
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
          log(`leasehold: approval webhook ${shownUrl(options.url)} answered ${response.status} for approval ${notice.approvalId} (not retried)`);
          return "failed";
        }
        return "sent";
      } catch (error) {
        const reason = (error as Error).name === "TimeoutError" ? `timed out after ${timeoutMs} ms` : (error as Error).message;
        log(`leasehold: approval webhook ${shownUrl(options.url)} failed for approval ${notice.approvalId}: ${reason} (not retried)`);
        return "failed";
      } finally {
        inFlight -= 1;
      }
    },
  };
}
