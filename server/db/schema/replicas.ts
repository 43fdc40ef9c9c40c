// State that several hub processes on one database must share
import { sql } from "drizzle-orm";
import { boolean, check, doublePrecision, index, integer, pgTable, smallint, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

/**
 * The hub's identity, pinned by the first process that starts on this
 * database: the public halves of its job-signing key and ledger log key.
 * A process whose keys differ refuses to start (server/keys/identity.ts):
 * guests pin the job key, witnesses the log key, so a replica with keys of
 * its own would sign jobs every guest refuses.
 */
export const hubIdentity = pgTable(
  "hub_identity",
  {
    id: smallint("id").primaryKey().default(1),
    jobKeyId: text("job_key_id").notNull(),
    jobPublicKey: text("job_public_key").notNull(),
    logOrigin: text("log_origin").notNull(),
    logVerifier: text("log_verifier").notNull(),
    createdAt: createdAt(),
  },
  (t) => [check("hub_identity_singleton", sql`${t.id} = 1`)],
);

/**
 * Token buckets every process takes from with one atomic statement
 * (server/limits/buckets.ts), so N processes allow what one allows.
 * Times are the database's clock, never a process's.
 */
export const limitBuckets = pgTable(
  "limit_buckets",
  {
    key: text("key").primaryKey(),
    tokens: doublePrecision("tokens").notNull(),
    refilledAt: timestamp("refilled_at", { withTimezone: true }).notNull(),
    /** Whether the statement that last wrote the row took a token (what it returns). */
    taken: boolean("taken").notNull(),
  },
  (t) => [index("limit_buckets_refilled_idx").on(t.refilledAt)],
);

/** Failure counts per key within a fixed window (sign-in throttling, server/limits/windows.ts). */
export const limitWindows = pgTable(
  "limit_windows",
  {
    key: text("key").primaryKey(),
    count: integer("count").notNull(),
    windowStart: timestamp("window_start", { withTimezone: true }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("limit_windows_expires_idx").on(t.expiresAt)],
);

/**
 * In-flight requests per key across processes (server/limits/in-flight.ts).
 * The holding process renews its rows; rows of a process that died stop
 * counting once not renewed for the lease time.
 */
export const limitInFlight = pgTable(
  "limit_in_flight",
  {
    id: uuid("id").primaryKey(),
    key: text("key").notNull(),
    holder: text("holder").notNull(),
    renewedAt: timestamp("renewed_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("limit_in_flight_key_idx").on(t.key), index("limit_in_flight_holder_idx").on(t.holder)],
);
