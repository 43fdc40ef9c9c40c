import { customType, timestamp } from "drizzle-orm/pg-core";

/** Raw bytes (hashes, canonical ledger entries) as `bytea`, surfaced as Uint8Array. */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType() {
    return "bytea";
  },
});

export const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
