/**
 * The actions list of the browser admin: every action the pipeline recorded,
 * newest first, searchable and paged. One query (plus a count) over
 * `actions` joined with what a person recognises an action by: the host's
 * name, the requesting token's name or admin, and the decision.
 *
 * The search is a case-insensitive substring match (LIKE wildcards in the
 * query are taken literally) over the command or code text, the operation,
 * the host, the token or admin name, the state and the decision.
 */
import { sql, type SQL } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { LeaseholdError } from "../errors";
import { neutraliseOneLine } from "../text/terminal";

/**
 * auto_allow / observe_scope / grant (no person), approved / denied / expired
 * / pending (held for a person), none (still deciding). `observe_scope`: run
 * at once under the observe lease by the token's observe scope, not judged
 * read-only.
 */
export type ActionDecision = "auto_allow" | "observe_scope" | "grant" | "approved" | "denied" | "expired" | "pending" | "none";

/** The decision as one word, from `actions.result.decision` and, for a held action, its approval's state. Needs `a` (actions) and `ap` (approvals). */
export const DECISION_SQL: SQL = sql`(case
  when a.result->>'decision' in ('auto_allow', 'observe_scope', 'grant') then a.result->>'decision'
  when a.result->>'decision' = 'hold' then coalesce(ap.state, 'pending')
  else 'none' end)`;

export interface ActionListItem {
  id: string;
  created_at: string;
  operation: string;
  capability: string;
  channel: string;
  host: string | null;
  /** Who asked: the token's name, or the admin who used the console. */
  requester: { kind: "token" | "admin" | "unknown"; name: string | null };
  /** The command, code or path the action names: first 200 characters, terminal controls shown as visible escapes. */
  summary: string;
  risk: string;
  state: string;
  decision: ActionDecision;
  exit_code: number | null;
}

export interface ActionPage {
  items: ActionListItem[];
  total: number;
  offset: number;
  limit: number;
  has_more: boolean;
}

export const MAX_PAGE = 200;

interface Row extends Record<string, unknown> {
  id: string;
  created_at: Date | string;
  operation: string;
  capability_id: string;
  channel: string;
  host: string | null;
  token_name: string | null;
  admin_name: string | null;
  token_id: string | null;
  admin_id: string | null;
  summary: string | null;
  risk_level: string;
  state: string;
  decision: ActionDecision;
  exit_code: string | number | null;
}

const FROM = sql`from actions a
  left join hosts h on h.id = a.host_id
  left join agent_tokens t on t.id = a.token_id
  left join admin_users u on u.id = a.admin_id
  left join approvals ap on ap.action_id = a.id`;

const SUMMARY = sql`coalesce(a.prepared->'arguments'->>'command', a.prepared->'arguments'->>'code', a.prepared->'arguments'->>'path', '')`;

/** `%text%` with LIKE's own wildcards and escape character taken literally. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function whereFor(query: string | undefined): SQL {
  const q = query?.trim() ?? "";
  if (q === "") return sql`true`;
  const p = likePattern(q);
  return sql`(${SUMMARY} ilike ${p} or a.operation ilike ${p} or coalesce(h.name, '') ilike ${p} or coalesce(t.name, '') ilike ${p}
    or coalesce(u.username, '') ilike ${p} or a.state ilike ${p} or ${DECISION_SQL} ilike ${p} or a.id::text = ${q})`;
}

/** Caller-chosen text for a table cell: every invisible, bidi or control character as a visible escape (server/text). */
function cell(text: string | null): string | null {
  return text === null ? null : neutraliseOneLine(text).text;
}

function toItem(row: Row): ActionListItem {
  const requester: ActionListItem["requester"] =
    row.token_id !== null ? { kind: "token", name: cell(row.token_name) } : row.admin_id !== null ? { kind: "admin", name: cell(row.admin_name) } : { kind: "unknown", name: null };
  return {
    id: row.id,
    created_at: new Date(row.created_at).toISOString(),
    operation: row.operation,
    capability: row.capability_id,
    channel: row.channel,
    host: cell(row.host),
    requester,
    // Cut by code points, so a surrogate pair is never split into a lone half.
    summary: neutraliseOneLine([...(row.summary ?? "")].slice(0, 200).join("")).text,
    risk: row.risk_level,
    state: row.state,
    decision: row.decision,
    exit_code: row.exit_code === null ? null : Number(row.exit_code),
  };
}

/** A page of actions, newest first. `limit` is capped at MAX_PAGE; a bad page is INVALID_ARGUMENT. */
export async function listActions(db: Database, options: { query?: string; offset?: number; limit?: number } = {}): Promise<ActionPage> {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? 50;
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new LeaseholdError("INVALID_ARGUMENT", `offset must be ≥ 0 and limit 1…${MAX_PAGE}`, { tier: "hub" });
  }
  const where = whereFor(options.query);
  const rows = await executeRows<Row>(
    db,
    sql`select a.id, a.created_at, a.operation, a.capability_id, a.channel, h.name as host, t.name as token_name, u.username as admin_name,
          a.token_id, a.admin_id, ${SUMMARY} as summary, a.risk_level, a.state, ${DECISION_SQL} as decision,
          a.result->'completion'->'envelope'->'exit'->>'code' as exit_code
        ${FROM} where ${where} order by a.created_at desc, a.id desc limit ${limit} offset ${offset}`,
  );
  const [count] = await executeRows<{ n: string | number }>(db, sql`select count(*)::int as n ${FROM} where ${where}`);
  const total = Number(count?.n ?? 0);
  return { items: rows.map(toItem), total, offset, limit, has_more: offset + rows.length < total };
}
