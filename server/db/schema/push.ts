// Web Push subscriptions (server/push): one row per browser an admin subscribed.
import { index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { adminUsers } from "./admins";
import { createdAt } from "./columns";

export const pushSubscriptions = pgTable(
  "push_subscriptions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    adminId: uuid("admin_id")
      .notNull()
      .references(() => adminUsers.id, { onDelete: "cascade" }),
    /** The push service's URL for this browser (https; it names the subscription, so it is unique). */
    endpoint: text("endpoint").notNull().unique(),
    /** The browser's P-256 public key (RFC 8291 `ua_public`), base64url of the 65-byte uncompressed point. */
    p256dh: text("p256dh").notNull(),
    /** The browser's 16-byte authentication secret, base64url. */
    auth: text("auth").notNull(),
    /** What the admin sees in the list (the browser's own description), never used for anything else. */
    label: text("label").notNull(),
    /** The VAPID key id this browser subscribed with: a hub process holding another key says so instead of sending. */
    vapidKeyId: text("vapid_key_id").notNull(),
    createdAt: createdAt(),
    lastSentAt: timestamp("last_sent_at", { withTimezone: true }),
  },
  (t) => [index("push_subscriptions_admin_idx").on(t.adminId)],
);
