/**
 * Push subscriptions in PostgreSQL, per admin. A browser's endpoint names its
 * subscription: subscribing it again (another admin signing in on the same
 * browser included) moves the row to whoever subscribed last, so one browser
 * is never notified for two accounts.
 */
import { and, eq, inArray, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../db";
import { adminUsers, pushSubscriptions } from "../db/schema";
import { ROLES } from "../admins/roles";
import { LeaseholdError } from "../errors";

const b64url = (bytes: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "must be base64url")
    .refine((s) => Buffer.from(s, "base64url").length === bytes, `must be ${bytes} bytes`);

/**
 * What `PushSubscription.toJSON()` gives, plus a label. Only `https:`
 * endpoints: the hub POSTs to this URL, and a push service is always
 * reached over TLS (a plain-http or credential-bearing URL is someone
 * pointing the hub somewhere else).
 */
export const subscriptionInput = z.object({
  endpoint: z
    .string()
    .max(2048)
    .refine((value) => {
      try {
        const url = new URL(value);
        return url.protocol === "https:" && url.username === "" && url.password === "";
      } catch {
        return false;
      }
    }, "must be an https URL without credentials"),
  keys: z.object({ p256dh: b64url(65).refine((s) => Buffer.from(s, "base64url")[0] === 0x04, "must be an uncompressed P-256 point"), auth: b64url(16) }),
  label: z.string().trim().min(1).max(120),
});
export type SubscriptionInput = z.infer<typeof subscriptionInput>;

export interface StoredSubscription {
  id: string;
  adminId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  label: string;
  vapidKeyId: string;
}

/** Saves (or moves to `adminId`) the browser's subscription made with VAPID key `vapidKeyId`. */
export async function saveSubscription(db: Database, adminId: string, input: SubscriptionInput, vapidKeyId: string): Promise<{ id: string }> {
  const values = { adminId, endpoint: input.endpoint, p256dh: input.keys.p256dh, auth: input.keys.auth, label: input.label, vapidKeyId };
  const [row] = await db
    .insert(pushSubscriptions)
    .values(values)
    .onConflictDoUpdate({ target: pushSubscriptions.endpoint, set: { ...values, createdAt: new Date(), lastSentAt: null } })
    .returning({ id: pushSubscriptions.id });
  if (row === undefined) throw new LeaseholdError("INTERNAL", "push subscription was not stored");
  return row;
}

/** The admin's subscriptions, newest first, as the account page lists them (no keys). */
export async function listSubscriptions(db: Database, adminId: string): Promise<Array<{ id: string; endpointOrigin: string; label: string; createdAt: string; lastSentAt: string | null }>> {
  const rows = await db.select().from(pushSubscriptions).where(eq(pushSubscriptions.adminId, adminId));
  return rows
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
    .map((r) => ({ id: r.id, endpointOrigin: new URL(r.endpoint).origin, label: r.label, createdAt: r.createdAt.toISOString(), lastSentAt: r.lastSentAt?.toISOString() ?? null }));
}

/** Removes one of the admin's own subscriptions (by id or endpoint); another admin's is NOT_FOUND. */
export async function removeSubscription(db: Database, adminId: string, which: { id: string } | { endpoint: string }): Promise<void> {
  const match = "id" in which ? eq(pushSubscriptions.id, which.id) : eq(pushSubscriptions.endpoint, which.endpoint);
  const removed = await db
    .delete(pushSubscriptions)
    .where(and(eq(pushSubscriptions.adminId, adminId), match))
    .returning({ id: pushSubscriptions.id });
  if (removed.length === 0) throw new LeaseholdError("NOT_FOUND", "no such push subscription of yours");
}

/** Subscriptions of every enabled admin who may decide actions: who a held action concerns. */
export async function deciderSubscriptions(db: Database): Promise<StoredSubscription[]> {
  return db
    .select({
      id: pushSubscriptions.id,
      adminId: pushSubscriptions.adminId,
      endpoint: pushSubscriptions.endpoint,
      p256dh: pushSubscriptions.p256dh,
      auth: pushSubscriptions.auth,
      label: pushSubscriptions.label,
      vapidKeyId: pushSubscriptions.vapidKeyId,
    })
    .from(pushSubscriptions)
    .innerJoin(adminUsers, eq(adminUsers.id, pushSubscriptions.adminId))
    .where(and(isNull(adminUsers.disabledAt), inArray(adminUsers.role, [...ROLES.deciders])));
}

/** The push service said the subscription is gone (404/410): it is deleted, for every process. */
export async function pruneSubscription(db: Database, id: string): Promise<void> {
  await db.delete(pushSubscriptions).where(eq(pushSubscriptions.id, id));
}

export async function markSent(db: Database, id: string, at: Date): Promise<void> {
  await db.update(pushSubscriptions).set({ lastSentAt: at }).where(eq(pushSubscriptions.id, id));
}
