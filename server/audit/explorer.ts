import { sql, type SQL } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { LeaseholdError } from "../errors";
import { encodeBase64 } from "../trust/ledger/base64";
import { ENTRY_TYPES } from "../ledger/entry";
import { parseSignatureLine } from "../trust/ledger/note";
import { toBytes } from "../ledger/node-store";
import { pinnedLogIdentity } from "../ledger/prove";

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
  /** The entry's `actor`: a `sha256:` digest (pseudonymous), never a name. */
  actor: string;
  /** A one-line digest of `data` for the table; the full entry is in the export. */
  summary: string;
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

/** A short `key=value` digest of an entry's data: long values (digests) shortened. */
export function summarizeData(data: unknown): string {
  if (data === null || typeof data !== "object") return data === undefined ? "" : JSON.stringify(data);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    let text = typeof value === "string" ? value : JSON.stringify(value);
    if (typeof value === "string" && /^sha256:[0-9a-f]{64}$/.test(value)) text = `${value.slice(0, 15)}…`;
    else if (text.length > 40) text = `${text.slice(0, 39)}…`;
    parts.push(`${key}=${text}`);
  }
  const joined = parts.join(" ");
  return joined.length > MAX_SUMMARY ? `${joined.slice(0, MAX_SUMMARY - 1)}…` : joined;
}

const bodyJson = sql`convert_from(body, 'UTF8')::jsonb`;

export async function listAuditEntries(
  db: Database,
  options: { before?: number; limit: number; type?: string; actionId?: string },
): Promise<AuditEntriesPage> {
  if (options.type !== undefined && !ENTRY_TYPES.includes(options.type as (typeof ENTRY_TYPES)[number])) {
    throw new LeaseholdError("INVALID_ARGUMENT", `unknown entry type ${JSON.stringify(options.type)}`, { tier: "ledger" });
  }
  const filters: SQL[] = [sql`leaf_index is not null`];
  if (options.type !== undefined) filters.push(sql`${bodyJson} ->> 'type' = ${options.type}`);
  if (options.actionId !== undefined) filters.push(sql`${bodyJson} ->> 'action_id' = ${options.actionId}`);
  const where = sql.join(filters, sql` and `);
  const paged = options.before === undefined ? where : sql`${where} and leaf_index < ${BigInt(options.before)}`;
  const [rows, [count]] = await Promise.all([
    executeRows<{ leaf_index: string | number; body: Uint8Array }>(
      db,
      sql`select leaf_index, body from ledger_entries where ${paged} order by leaf_index desc limit ${options.limit + 1}`,
    ),
    executeRows<{ n: string | number }>(db, sql`select count(*) as n from ledger_entries where ${where}`),
  ]);
  const more = rows.length > options.limit;
  const page = rows.slice(0, options.limit).map((row) => toRow(Number(row.leaf_index), toBytes(row.body)));
  return { entries: page, nextBefore: more ? (page.at(-1)?.index ?? null) : null, total: Number(count?.n ?? 0) };
}

function toRow(index: number, body: Uint8Array): AuditEntryRow {
  // Displayed as stored: a row someone tampered with shows what it now says (the verifier is what notices).
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown>;
  } catch {
    return { index, type: "(unreadable)", time: "", actionId: null, actor: "", summary: `${body.length} bytes that are not JSON` };
  }
  const str = (v: unknown): string => (typeof v === "string" ? v : "");
  return {
    index,
    type: str(parsed.type),
    time: str(parsed.time),
    actionId: typeof parsed.action_id === "string" ? parsed.action_id : null,
    actor: str(parsed.actor),
    summary: summarizeData(parsed.data),
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
