/**
 * Web Push for held actions: each newly held action is pushed once to every
 * browser subscribed by an enabled admin who may decide it (owner, approver).
 * It rides the same hook as the webhook (`PipelineDeps.onHeld`, told after
 * the hold committed) and keeps the webhook's delivery rules: in the
 * background, one attempt per subscription, a timeout, no retries, a bound
 * on deliveries in flight; failures are logged, never thrown, and never
 * touch the action.
 *
 * Unlike the webhook body, the payload names the command (cut to
 * COMMAND_PREVIEW characters, invisible and control characters escaped): it
 * is encrypted to the admin's own browser (RFC 8291), so the push service
 * relays ciphertext it cannot read. The browser shows it as a system
 * notification, possibly on a locked screen; the decision itself still
 * happens signed in, on the card the notification opens.
 *
 * A push service answering 404 or 410 says the subscription is gone (the
 * browser unsubscribed or was reset): its row is deleted. A subscription made
 * with another VAPID key than this process holds is not sent to (the push
 * service would refuse it) and the log line says which key to share.
 */
import { eq } from "drizzle-orm";
import type { Database } from "../db";
import { actions } from "../db/schema";
import { logLine, neutraliseOneLine } from "../text";
import { encryptPushPayload, MAX_PLAINTEXT_BYTES } from "./encrypt";
import { deciderSubscriptions, markSent, pruneSubscription, type StoredSubscription } from "./subscriptions";
import { vapidAuthorization, type VapidKey } from "./vapid";

export const PUSH_LIMITS = { timeoutMs: 5000, maxInFlight: 16 } as const;
const COMMAND_PREVIEW = 200;

export interface HeldPushNotice {
  approvalId: string;
  actionId: string;
  host: string;
  operation: string;
  risk: string;
  deadline: Date;
}

export type PushOutcome = "sent" | "pruned" | "failed" | "dropped" | "other_key";

export interface PushNotifierOptions {
  db: Database;
  vapid: VapidKey;
  /** The hub's public URL: the card's link, and the VAPID `sub` a push service's operator reaches us by. */
  publicUrl: string;
  timeoutMs?: number;
  maxInFlight?: number;
  log?: (line: string) => void;
  fetch?: typeof fetch;
  now?: () => Date;
}

export interface PushNotifier {
  /** Pushes the notice to every decider's browser; resolves with one outcome per subscription when all attempts ended (tests await it, the pipeline does not). */
  notify(notice: HeldPushNotice): Promise<PushOutcome[]>;
}

/** What the service worker receives (decrypted) and shows. */
export interface PushPayload {
  type: "approval.requested";
  approval_id: string;
  action_id: string;
  title: string;
  body: string;
  url: string;
}

/** The command (or code, or path) of the held action, one line, escaped and cut. */
async function subjectOf(db: Database, actionId: string): Promise<string | null> {
  const [row] = await db.select({ prepared: actions.prepared }).from(actions).where(eq(actions.id, actionId));
  const args = ((row?.prepared ?? {}) as { arguments?: Record<string, unknown> }).arguments ?? {};
  const subject = [args["command"], args["code"], args["path"]].find((v): v is string => typeof v === "string");
  if (subject === undefined) return null;
  const shown = neutraliseOneLine(subject).text;
  return shown.length > COMMAND_PREVIEW ? `${shown.slice(0, COMMAND_PREVIEW)}…` : shown;
}

export function pushPayload(notice: HeldPushNotice, subject: string | null, publicUrl: string): PushPayload {
  const operation = neutraliseOneLine(notice.operation).text;
  const host = neutraliseOneLine(notice.host).text;
  return {
    type: "approval.requested",
    approval_id: notice.approvalId,
    action_id: notice.actionId,
    title: `Approval needed: ${operation} on ${host}`,
    body: `${subject === null ? operation : subject} — ${notice.risk} risk, decide before ${notice.deadline.toISOString().slice(11, 16)} UTC`,
    url: `${publicUrl.replace(/\/+$/, "")}/approvals#${notice.approvalId}`,
  };
}

function shownEndpoint(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return "(push endpoint)";
  }
}

export function createPushNotifier(options: PushNotifierOptions): PushNotifier {
  const timeoutMs = options.timeoutMs ?? PUSH_LIMITS.timeoutMs;
  const maxInFlight = options.maxInFlight ?? PUSH_LIMITS.maxInFlight;
  const sink = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (line: string): void => sink(logLine(line));
  const send = options.fetch ?? fetch;
  const now = options.now ?? (() => new Date());
  let inFlight = 0;

  async function deliver(sub: StoredSubscription, body: Buffer, ttlS: number, topic: string, what: string): Promise<PushOutcome> {
    if (sub.vapidKeyId !== options.vapid.keyId) {
      log(`leasehold: push: subscription ${sub.id} was made with VAPID key ${sub.vapidKeyId}, this process holds ${options.vapid.keyId}: share push/vapid.key in LEASEHOLD_KEY_DIR across hub processes (not sent: ${what})`);
      return "other_key";
    }
    if (inFlight >= maxInFlight) {
      log(`leasehold: push: ${inFlight} deliveries in flight, ${what} not pushed to subscription ${sub.id} (the approvals page still shows it)`);
      return "dropped";
    }
    inFlight += 1;
    try {
      const encrypted = encryptPushPayload(body, { p256dh: Buffer.from(sub.p256dh, "base64url"), auth: Buffer.from(sub.auth, "base64url") });
      const response = await send(sub.endpoint, {
        method: "POST",
        headers: {
          authorization: vapidAuthorization(options.vapid, sub.endpoint, options.publicUrl, now()),
          "content-encoding": "aes128gcm",
          "content-type": "application/octet-stream",
          ttl: String(ttlS),
          urgency: "high",
          topic,
        },
        body: new Uint8Array(encrypted),
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.status === 404 || response.status === 410) {
        await pruneSubscription(options.db, sub.id);
        log(`leasehold: push: ${shownEndpoint(sub.endpoint)} answered ${response.status} for subscription ${sub.id}: the browser unsubscribed, subscription removed`);
        return "pruned";
      }
      if (response.status < 200 || response.status > 299) {
        log(`leasehold: push: ${shownEndpoint(sub.endpoint)} answered ${response.status} for ${what} (subscription ${sub.id}, not retried)`);
        return "failed";
      }
      await markSent(options.db, sub.id, now());
      return "sent";
    } catch (error) {
      const reason = (error as Error).name === "TimeoutError" ? `timed out after ${timeoutMs} ms` : (error as Error).message;
      log(`leasehold: push: ${shownEndpoint(sub.endpoint)} failed for ${what} (subscription ${sub.id}): ${reason} (not retried)`);
      return "failed";
    } finally {
      inFlight -= 1;
    }
  }

  return {
    async notify(notice) {
      const what = `approval ${notice.approvalId}`;
      try {
        const subscriptions = await deciderSubscriptions(options.db);
        if (subscriptions.length === 0) return [];
        let body = Buffer.from(JSON.stringify(pushPayload(notice, await subjectOf(options.db, notice.actionId), options.publicUrl)), "utf8");
        // A long host or operation name could still overflow one record: the card has the rest.
        if (body.length > MAX_PLAINTEXT_BYTES) body = Buffer.from(JSON.stringify(pushPayload({ ...notice, host: notice.host.slice(0, 100), operation: notice.operation.slice(0, 100) }, null, options.publicUrl)), "utf8");
        // Undelivered past the deadline, the notice is worthless: the push service may drop it then.
        const ttlS = Math.max(0, Math.floor((notice.deadline.getTime() - now().getTime()) / 1000));
        const topic = notice.approvalId.replace(/-/g, "");
        return await Promise.all(subscriptions.map((sub) => deliver(sub, body, ttlS, topic, what)));
      } catch (error) {
        log(`leasehold: push: ${what} not pushed: ${(error as Error).message}`);
        return [];
      }
    },
  };
}
