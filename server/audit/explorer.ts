import { sql, type SQL } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { LeaseholdError } from "../errors";
import { encodeBase64 } from "../trust/ledger/base64";
import { ENTRY_TYPES } from "../ledger/entry";
import { parseSignatureLine } from "../trust/ledger/note";
import { toBytes } from "../ledger/node-store";
import { pinnedLogIdentity } from "../ledger/prove";
import { actorsMatching, nameDirectory, namesIn, type AuditName, type NameDirectory } from "./names";

/**
 * What the audit explorer shows: the integrated entries, newest first, and
 * the checkpoints with their witness cosignatures — read straight from the
 * ledger tables. Nothing here vouches for anything: the page's verdict comes
 * only from the browser verifying the export (server/ledger/verify.ts) with
 * a key the auditor pinned. Showing is not proving.
 */

export interface AuditEntryRow {
  index: number;
  type: string;
  time: string;
  actionId: string | null;
  /** The entry's `actor` as stored: a `sha256:` digest (pseudonymous). */
  actor: string;
  /** Whose digest it is, when the hub can recompute it (server/audit/names.ts); null otherwise. */
  actorName: AuditName | null;
  /** A one-line digest of `data` for the table, known ids and digests named; the full entry is `auditEntry`. */
  summary: string;
}

/** One entry in full, for the row a reader expands. */
export interface AuditEntryDetail {
  index: number;
  /** The stored JSON, pretty-printed as stored (a tampered row shows what it now says). */
  json: string;
  /** Every id or digest in it the hub can name. */
  names: AuditName[];
}

export interface AuditEntryFilter {
  type?: string;
  /** An action id or its prefix (the 8-character ids shown elsewhere), at least 4 characters. */
  actionId?: string;
  /** Part of an actor's name ("alice", "ci-bot", "local"), or a `sha256:` prefix of the stored digest. */
  actor?: string;
  /** Entry time bounds (inclusive), ISO 8601. */
  from?: string;
  to?: string;
  /** Text anywhere in the stored entry JSON (case-insensitive). */
  text?: string;
}

export interface AuditEntriesPage {
  entries: AuditEntryRow[];
  /** Pass as `before` for the next (older) page; null when this page reaches index 0. */
  nextBefore: number | null;
  /** Entries matching the filter, all pages. */
  total: number;
}

export interface AuditCosignature {
  witness: string;
  keyId: string;
  /** The cosignature's own timestamp (seconds since the epoch, from the signed line). */
  timestamp: number | null;
  line: string;
}

export interface AuditCheckpointRow {
  size: number;
  root: string;
  createdAt: string;
  note: string;
  cosignatures: AuditCosignature[];
}

export interface AuditSummary {
  origin: string | null;
  /** The log key the hub reports (pinned by its first integration). A hint for the auditor, not a trust anchor. */
  logKey: string;
  integrated: number;
  pending: number;
  latestCheckpoint: { size: number; createdAt: string; cosignatures: number } | null;
  entryTypes: string[];
}

const MAX_SUMMARY = 160;

/** A short `key=value` digest of an entry's data: known ids and digests named, other digests and long values shortened. */
export function summarizeData(data: unknown, names: NameDirectory = new Map()): string {
  if (data === null || typeof data !== "object") return data === undefined ? "" : JSON.stringify(data);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    let text = typeof value === "string" ? value : JSON.stringify(value);
    const named = typeof value === "string" ? names.get(value) : undefined;
    if (named !== undefined) text = named.label;
    else if (typeof value === "string" && /^sha256:[0-9a-f]{64}$/.test(value)) text = `${value.slice(0, 15)}…`;
    else if (text.length > 40) text = `${text.slice(0, 39)}…`;
    parts.push(`${key}=${text}`);
  }
  const joined = parts.join(" ");
  return joined.length > MAX_SUMMARY ? `${joined.slice(0, MAX_SUMMARY - 1)}…` : joined;
}

const bodyJson = sql`convert_from(body, 'UTF8')::jsonb`;

function instant(value: string, field: string): string {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw new LeaseholdError("INVALID_ARGUMENT", `${field} is not a date and time (ISO 8601, e.g. 2026-12-06T09:00:00Z)`, { tier: "ledger" });
  return new Date(ms).toISOString();
}

/** The SQL conditions of a filter; the actor filter needs the name directory. */
function filterConditions(options: AuditEntryFilter, directory: NameDirectory): SQL[] {
  if (options.type !== undefined && !ENTRY_TYPES.includes(options.type as (typeof ENTRY_TYPES)[number])) {
    throw new LeaseholdError("INVALID_ARGUMENT", `unknown entry type ${JSON.stringify(options.type)}`, { tier: "ledger" });
  }
  const filters: SQL[] = [sql`leaf_index is not null`];
  if (options.type !== undefined) filters.push(sql`${bodyJson} ->> 'type' = ${options.type}`);
  // starts_with, not LIKE: ids may hold `_`, which LIKE reads as a wildcard.
  if (options.actionId !== undefined) filters.push(sql`starts_with(${bodyJson} ->> 'action_id', ${options.actionId.toLowerCase()})`);
  if (options.actor !== undefined) {
    if (options.actor.startsWith("sha256:")) filters.push(sql`starts_with(${bodyJson} ->> 'actor', ${options.actor.toLowerCase()})`);
    else {
      const digests = actorsMatching(options.actor, directory);
      filters.push(digests.length === 0 ? sql`false` : sql`${bodyJson} ->> 'actor' in (${sql.join(digests.map((d) => sql`${d}`), sql`, `)})`);
    }
  }
  if (options.from !== undefined) filters.push(sql`(${bodyJson} ->> 'time')::timestamptz >= ${instant(options.from, "from")}::timestamptz`);
  if (options.to !== undefined) filters.push(sql`(${bodyJson} ->> 'time')::timestamptz <= ${instant(options.to, "to")}::timestamptz`);
  if (options.text !== undefined) filters.push(sql`strpos(lower(convert_from(body, 'UTF8')), ${options.text.toLowerCase()}) > 0`);
  return filters;
}

export async function listAuditEntries(db: Database, options: AuditEntryFilter & { before?: number; limit: number }): Promise<AuditEntriesPage> {
  const base = await nameDirectory(db);
  const where = sql.join(filterConditions(options, base), sql` and `);
  const paged = options.before === undefined ? where : sql`${where} and leaf_index < ${BigInt(options.before)}`;
  const [rows, [count]] = await Promise.all([
    executeRows<{ leaf_index: string | number; body: Uint8Array }>(
      db,
      sql`select leaf_index, body from ledger_entries where ${paged} order by leaf_index desc limit ${options.limit + 1}`,
    ),
    executeRows<{ n: string | number }>(db, sql`select count(*) as n from ledger_entries where ${where}`),
  ]);
  const more = rows.length > options.limit;
  const parsed = rows.slice(0, options.limit).map((row) => ({ index: Number(row.leaf_index), body: toBytes(row.body) })).map((r) => ({ ...r, json: parseBody(r.body) }));
  const actionIds = parsed.flatMap((r) => (typeof r.json?.action_id === "string" ? [r.json.action_id] : []));
  const names = actionIds.length === 0 ? base : await nameDirectory(db, { actionIds });
  const page = parsed.map((r) => toRow(r.index, r.body, r.json, names));
  return { entries: page, nextBefore: more ? (page.at(-1)?.index ?? null) : null, total: Number(count?.n ?? 0) };
}

/** One entry in full with the names in it; NOT_FOUND when no integrated entry has that index. */
export async function auditEntry(db: Database, index: number): Promise<AuditEntryDetail> {
  const [row] = await executeRows<{ body: Uint8Array }>(db, sql`select body from ledger_entries where leaf_index = ${BigInt(index)}`);
  if (row === undefined) throw new LeaseholdError("NOT_FOUND", `no integrated ledger entry has index ${index}`, { tier: "ledger" });
  const body = toBytes(row.body);
  const json = parseBody(body);
  if (json === null) return { index, json: `(${body.length} bytes that are not JSON)`, names: [] };
  const names = await nameDirectory(db, typeof json.action_id === "string" ? { actionIds: [json.action_id] } : {});
  return { index, json: JSON.stringify(json, null, 2), names: namesIn(json, names) };
}

function parseBody(body: Uint8Array): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function toRow(index: number, body: Uint8Array, parsed: Record<string, unknown> | null, names: NameDirectory): AuditEntryRow {
  // Displayed as stored: a row someone tampered with shows what it now says (the verifier is what notices).
  if (parsed === null) return { index, type: "(unreadable)", time: "", actionId: null, actor: "", actorName: null, summary: `${body.length} bytes that are not a JSON object` };
  const str = (v: unknown): string => (typeof v === "string" ? v : "");
  const actor = str(parsed.actor);
  return {
    index,
    type: str(parsed.type),
    time: str(parsed.time),
    actionId: typeof parsed.action_id === "string" ? parsed.action_id : null,
    actor,
    actorName: names.get(actor) ?? null,
    summary: summarizeData(parsed.data, names),
  };
}

function cosignatureOf(line: string, witness: string, keyId: string): AuditCosignature {
  const parsed = parseSignatureLine(line);
  let timestamp: number | null = null;
  if (parsed.ok && parsed.signature.signature.length === 72) {
    const raw = parsed.signature.signature;
    const stamp = new DataView(raw.buffer, raw.byteOffset, 8).getBigUint64(0, false);
    if (stamp <= BigInt(Number.MAX_SAFE_INTEGER)) timestamp = Number(stamp);
  }
  return { witness, keyId, timestamp, line };
}

export async function listAuditCheckpoints(db: Database, options: { before?: number; limit: number }): Promise<{ checkpoints: AuditCheckpointRow[]; nextBefore: number | null }> {
  const rows = await executeRows<{ tree_size: string | number; root_hash: Uint8Array; note: string; created_at: Date | string }>(
    db,
    options.before === undefined
      ? sql`select tree_size, root_hash, note, created_at from ledger_checkpoints order by tree_size desc limit ${options.limit + 1}`
      : sql`select tree_size, root_hash, note, created_at from ledger_checkpoints where tree_size < ${BigInt(options.before)} order by tree_size desc limit ${options.limit + 1}`,
  );
  const more = rows.length > options.limit;
  const page = rows.slice(0, options.limit);
  const sizes = page.map((r) => BigInt(String(r.tree_size)));
  const cosigs =
    sizes.length === 0
      ? []
      : await executeRows<{ tree_size: string | number; witness_name: string; witness_key_id: string; signature_line: string }>(
          db,
          sql`select tree_size, witness_name, witness_key_id, signature_line from ledger_cosignatures
              where tree_size >= ${sizes.at(-1)!} and tree_size <= ${sizes[0]!} order by id`,
        );
  const bySize = new Map<string, AuditCosignature[]>();
  for (const c of cosigs) {
    const list = bySize.get(String(c.tree_size)) ?? [];
    list.push(cosignatureOf(c.signature_line, c.witness_name, c.witness_key_id));
    bySize.set(String(c.tree_size), list);
  }
  const checkpoints = page.map((r) => ({
    size: Number(r.tree_size),
    root: encodeBase64(toBytes(r.root_hash)),
    createdAt: new Date(r.created_at).toISOString(),
    note: r.note,
    cosignatures: bySize.get(String(r.tree_size)) ?? [],
  }));
  return { checkpoints, nextBefore: more ? (checkpoints.at(-1)?.size ?? null) : null };
}

export async function auditSummary(db: Database, runningKey: { origin: string; verifier: string }): Promise<AuditSummary> {
  const [pinned, [counts], [head]] = await Promise.all([
    pinnedLogIdentity(db),
    executeRows<{ integrated: string | number; pending: string | number }>(
      db,
      sql`select count(leaf_index) as integrated, count(*) - count(leaf_index) as pending from ledger_entries`,
    ),
    executeRows<{ tree_size: string | number; created_at: Date | string; cosignatures: string | number }>(
      db,
      sql`select c.tree_size, c.created_at, (select count(*) from ledger_cosignatures s where s.tree_size = c.tree_size) as cosignatures
          from ledger_checkpoints c order by c.tree_size desc limit 1`,
    ),
  ]);
  return {
    origin: pinned?.origin ?? runningKey.origin,
    logKey: pinned?.verifier ?? runningKey.verifier,
    integrated: Number(counts?.integrated ?? 0),
    pending: Number(counts?.pending ?? 0),
    latestCheckpoint: head ? { size: Number(head.tree_size), createdAt: new Date(head.created_at).toISOString(), cosignatures: Number(head.cosignatures) } : null,
    entryTypes: [...ENTRY_TYPES],
  };
}
