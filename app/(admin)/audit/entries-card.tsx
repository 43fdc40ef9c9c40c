"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Fragment, useId, useState, type FormEvent } from "react";
import type { AuditEntryFilter, AuditEntryRow } from "~/server/audit/explorer";
import { useTRPC } from "../../_components/trpc";
import { Card, Code, EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";

/**
 * The entries, for people: actors and ids named where the hub can recompute
 * them (the digest stays on hover and in the expanded entry), action ids
 * linked to their pages, and filters by kind, action id prefix, actor, time
 * and text. What is shown is the hub's word; the verdict is VerifyCard's.
 */

function shortDigest(value: string): string {
  return value.startsWith("sha256:") ? `${value.slice(0, 15)}…` : value;
}

/** `datetime-local` gives local wall time without a zone; the hub wants an instant. */
function toInstant(local: string): string | undefined {
  if (local === "") return undefined;
  const ms = new Date(local).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

interface FilterDraft {
  type: string;
  actionId: string;
  actor: string;
  from: string;
  to: string;
  text: string;
}

const EMPTY_DRAFT: FilterDraft = { type: "", actionId: "", actor: "", from: "", to: "", text: "" };

function filterOf(draft: FilterDraft): AuditEntryFilter {
  const trimmed = (v: string) => (v.trim() === "" ? undefined : v.trim());
  const out: AuditEntryFilter = {};
  const type = trimmed(draft.type);
  const actionId = trimmed(draft.actionId);
  const actor = trimmed(draft.actor);
  const from = toInstant(draft.from);
  const to = toInstant(draft.to);
  const text = trimmed(draft.text);
  if (type !== undefined) out.type = type;
  if (actionId !== undefined) out.actionId = actionId;
  if (actor !== undefined) out.actor = actor;
  if (from !== undefined) out.from = from;
  if (to !== undefined) out.to = to;
  if (text !== undefined) out.text = text;
  return out;
}

function FilterForm({ entryTypes, onApply }: { entryTypes: string[]; onApply: (filter: AuditEntryFilter) => void }) {
  const [draft, setDraft] = useState<FilterDraft>(EMPTY_DRAFT);
  const ids = { type: useId(), actionId: useId(), actor: useId(), from: useId(), to: useId(), text: useId() };
  const field = (name: keyof FilterDraft) => ({ id: ids[name], value: draft[name], onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [name]: e.target.value }) });
  function apply(event: FormEvent) {
    event.preventDefault();
    onApply(filterOf(draft));
  }
  function clear() {
    setDraft(EMPTY_DRAFT);
    onApply({});
  }
  return (
    <form className="audit-filter" onSubmit={apply}>
      <div>
        <label htmlFor={ids.type}>Kind</label>
        <select {...field("type")} data-testid="audit-filter-type">
          <option value="">all kinds</option>
          {entryTypes.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={ids.actionId}>Action id (or its first 8 characters)</label>
        <input {...field("actionId")} placeholder="e.g. 5f0c2a9e" spellCheck={false} data-testid="audit-filter-action" />
      </div>
      <div>
        <label htmlFor={ids.actor}>Actor (name, or sha256: prefix)</label>
        <input {...field("actor")} placeholder="e.g. alice, ci-bot, local" spellCheck={false} data-testid="audit-filter-actor" />
      </div>
      <div>
        <label htmlFor={ids.from}>From</label>
        <input {...field("from")} type="datetime-local" data-testid="audit-filter-from" />
      </div>
      <div>
        <label htmlFor={ids.to}>To</label>
        <input {...field("to")} type="datetime-local" data-testid="audit-filter-to" />
      </div>
      <div>
        <label htmlFor={ids.text}>Text in the entry</label>
        <input {...field("text")} placeholder="e.g. capability.egress" spellCheck={false} data-testid="audit-filter-text" />
      </div>
      <div className="audit-filter-buttons">
        <button type="submit">Filter</button>
        <button type="button" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** The expanded row: the stored entry in full, and the names of every id and digest in it. */
function EntryDetail({ index }: { index: number }) {
  const trpc = useTRPC();
  const detail = useQuery(trpc.audit.entry.queryOptions({ index }));
  if (detail.isPending) return <Loading what={`entry ${index}`} />;
  if (detail.isError) return <ErrorState>{errorText(detail.error)}</ErrorState>;
  return (
    <div className="audit-entry-detail" data-testid="audit-entry-detail">
      {detail.data.names.length === 0 ? null : (
        <dl className="audit-names">
          {detail.data.names.map((n) => (
            <Fragment key={n.value}>
              <dt>
                <Code>{shortDigest(n.value)}</Code>
              </dt>
              <dd>{n.href === null ? n.label : <Link href={n.href}>{n.label}</Link>}</dd>
            </Fragment>
          ))}
        </dl>
      )}
      <pre className="code-block" tabIndex={0} aria-label={`ledger entry ${index} as stored`}>
        {detail.data.json}
      </pre>
    </div>
  );
}

function EntryRow({ entry, open, onToggle }: { entry: AuditEntryRow; open: boolean; onToggle: () => void }) {
  const detailId = `audit-entry-${entry.index}`;
  return (
    <>
      <tr data-testid="audit-entry">
        <td data-label="Index">
          <button type="button" className="link-button" aria-expanded={open} aria-controls={detailId} onClick={onToggle} aria-label={`${open ? "Hide" : "Show"} entry ${entry.index} in full`}>
            {open ? "▾" : "▸"} {entry.index}
          </button>
        </td>
        <td data-label="Type" className="nowrap">
          <Code>{entry.type}</Code>
        </td>
        <td data-label="Time">{entry.time === "" ? "—" : new Date(entry.time).toLocaleString()}</td>
        <td data-label="Action">
          {entry.actionId === null ? (
            "—"
          ) : (
            <Link href={`/actions/${entry.actionId}`} title={entry.actionId} data-testid="audit-action-link">
              <Code>{entry.actionId.slice(0, 8)}</Code>
            </Link>
          )}
        </td>
        <td data-label="Actor" className="nowrap" title={entry.actor}>
          {entry.actorName === null ? <Code>{shortDigest(entry.actor)}</Code> : <span data-testid="audit-actor-name">{entry.actorName.label}</span>}
        </td>
        <td data-label="Data" className="audit-data">
          <Code>{entry.summary}</Code>
        </td>
      </tr>
      {open ? (
        <tr id={detailId} className="audit-entry-expanded">
          <td colSpan={6}>
            <EntryDetail index={entry.index} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

export function EntriesCard() {
  const trpc = useTRPC();
  const [cursors, setCursors] = useState<(number | undefined)[]>([undefined]);
  const [filter, setFilter] = useState<AuditEntryFilter>({});
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const before = cursors.at(-1);
  const summary = useQuery(trpc.audit.summary.queryOptions());
  const entries = useQuery(trpc.audit.entries.queryOptions({ limit: 25, ...filter, ...(before === undefined ? {} : { before }) }));
  const toggle = (index: number) => setOpen((s) => (s.has(index) ? new Set([...s].filter((i) => i !== index)) : new Set([...s, index])));
  const filtered = Object.keys(filter).length > 0;

  return (
    <Card title="Entries" className="audit-entries">
      {summary.data !== undefined ? (
        <p className="muted" data-testid="audit-summary">
          {summary.data.integrated} entries integrated{summary.data.pending > 0 ? `, ${summary.data.pending} waiting` : ""}
          {summary.data.latestCheckpoint !== null ? ` · latest checkpoint at size ${summary.data.latestCheckpoint.size}` : ""}
        </p>
      ) : null}
      <FilterForm
        entryTypes={summary.data?.entryTypes ?? []}
        onApply={(next) => {
          setFilter(next);
          setCursors([undefined]);
        }}
      />
      {entries.isPending ? (
        <Loading what="entries" />
      ) : entries.isError ? (
        <ErrorState>{errorText(entries.error)}</ErrorState>
      ) : entries.data.entries.length === 0 ? (
        <EmptyState>{filtered ? "No entries match this filter." : "The log has no integrated entries yet."}</EmptyState>
      ) : (
        <>
          <div className="table-wrap">
            <table className="audit-table" data-testid="audit-entries">
              <thead>
                <tr>
                  <th scope="col">Index</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Time</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Data</th>
                </tr>
              </thead>
              <tbody>
                {entries.data.entries.map((e) => (
                  <EntryRow key={e.index} entry={e} open={open.has(e.index)} onToggle={() => toggle(e.index)} />
                ))}
              </tbody>
            </table>
          </div>
          <div className="form-row">
            <button type="button" onClick={() => setCursors((c) => c.slice(0, -1))} disabled={cursors.length <= 1}>
              ← Newer
            </button>
            <button type="button" onClick={() => setCursors((c) => [...c, entries.data.nextBefore ?? undefined])} disabled={entries.data.nextBefore === null}>
              Older →
            </button>
            <span className="muted">{entries.data.total} matching</span>
          </div>
        </>
      )}
    </Card>
  );
}
