"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading, RiskBadge } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { DECISION_LABEL, DECISION_TONE, formatTime } from "../_dashboard/labels";

const PAGE = 25;

/** The list; the search and page live in the URL (?q=&page=) so a result can be linked and Back works. */
// eslint-disable-next-line max-lines-per-function -- filters, paging and the table share one query's state
export function ActionsList() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const query = params.get("q") ?? "";
  const page = Math.max(0, Number.parseInt(params.get("page") ?? "0", 10) || 0);
  const [draft, setDraft] = useState(query);
  const list = useQuery({ ...trpc.actions.list.queryOptions({ query: query === "" ? undefined : query, offset: page * PAGE, limit: PAGE }), placeholderData: keepPreviousData });

  const go = (q: string, p: number) => {
    const next = new URLSearchParams();
    if (q !== "") next.set("q", q);
    if (p > 0) next.set("page", String(p));
    router.push(`/actions${next.size > 0 ? `?${next.toString()}` : ""}`);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    go(draft.trim(), 0);
  };

  return (
    <Card>
      <form role="search" onSubmit={submit} className="actions-search">
        <label htmlFor="actions-q">Search actions</label>
        <div className="form-row">
          <input id="actions-q" type="search" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="ls, run_command, local, my-token, denied…" maxLength={200} />
          <button type="submit" className="primary">
            Search
          </button>
          {query !== "" ? (
            <button type="button" onClick={() => { setDraft(""); go("", 0); }}>
              Clear
            </button>
          ) : null}
        </div>
      </form>
      {list.isPending ? (
        <Loading what="actions" />
      ) : list.isError ? (
        <ErrorState>Actions unavailable: {errorText(list.error)}</ErrorState>
      ) : list.data.items.length === 0 ? (
        <EmptyState>{query === "" ? "No actions yet." : `No action matches “${query}”.`}</EmptyState>
      ) : (
        <>
          <p className="hint" aria-live="polite">
            {list.data.total} action{list.data.total === 1 ? "" : "s"}
            {query === "" ? "" : ` matching “${query}”`} · showing {list.data.offset + 1}–{list.data.offset + list.data.items.length}
          </p>
          <div className="table-wrap">
            <table className="stack-table" data-testid="actions-table">
              <thead>
                <tr>
                  <th scope="col">Action</th>
                  <th scope="col">Host</th>
                  <th scope="col">Requester</th>
                  <th scope="col">Risk</th>
                  <th scope="col">Decision</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((a) => (
                  <tr key={a.id}>
                    <td data-label="Action">
                      <Link href={`/actions/${a.id}`}>
                        <Code>{a.operation}</Code>
                      </Link>
                      {a.summary === "" ? null : <div className="actions-summary">{a.summary}</div>}
                    </td>
                    <td data-label="Host">{a.host ?? "—"}</td>
                    <td data-label="Requester">
                      {a.requester.kind === "admin" ? "console: " : a.requester.kind === "token" ? "token: " : ""}
                      {a.requester.name ?? "—"}
                    </td>
                    <td data-label="Risk">
                      <RiskBadge level={a.risk} />
                    </td>
                    <td data-label="Decision">
                      <Badge tone={DECISION_TONE[a.decision] ?? "neutral"}>{DECISION_LABEL[a.decision] ?? a.decision}</Badge>
                    </td>
                    <td data-label="State">
                      {a.state}
                      {a.exit_code === null ? "" : ` (exit ${a.exit_code})`}
                    </td>
                    <td data-label="Created">{formatTime(a.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="form-row" aria-label="Pages">
            <button type="button" disabled={page === 0} onClick={() => go(query, page - 1)}>
              Newer
            </button>
            <span className="muted">Page {page + 1}</span>
            <button type="button" disabled={!list.data.has_more} onClick={() => go(query, page + 1)}>
              Older
            </button>
          </nav>
        </>
      )}
    </Card>
  );
}
