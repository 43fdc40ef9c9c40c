// State that several hub processes on one database must share
import { sql } from "drizzle-orm";
import { boolean, check, doublePrecision, index, integer, jsonb, pgTable, smallint, text, timestamp } from "drizzle-orm/pg-core";
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
 * In-flight requests per key across processes (server/limits/in-flight.ts):
 * one row per key with the total and each holding process's share, so a
 * place is taken or given back with one atomic statement.
 */
export const limitInFlight = pgTable("limit_in_flight", {
  key: text("key").primaryKey(),
  total: integer("total").notNull(),
  /** `{holder: places}`: what to give back when a holder is found dead. */
  holders: jsonb("holders").$type<Record<string, number>>().notNull(),
});

/** Hub processes holding in-flight places, renewed while they live; a stale row marks a dead one. */
export const limitHolders = pgTable(
  "limit_holders",
  {
    holder: text("holder").primaryKey(),
    renewedAt: timestamp("renewed_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("limit_holders_renewed_idx").on(t.renewedAt)],
);
