"use client";

import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useTRPC } from "../../_components/trpc";
import { Code, EmptyState, ErrorState, Loading, RiskBadge } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { ApprovalItem, approveNeedsConfirmation, type Decided, type ItemMode } from "./approval-card";
import { useDecisions } from "./decide";
import { OutcomeRow } from "./outcome-row";
import { commandLabel, livenessOrder, queueOrder } from "./summary";
import type { BatchResult, HeldAction } from "./types";

/**
 * How often the queue asks the hub. Up to 2 s is allowed; the benchmark's
 * goal (held → visible ≤ 1 s at p95) needs less: at 1 s it measured p50 848 ms,
 * p95 1109 ms on the shared test machine, so 500 ms (one small query per
 * open page per half second).
 */
export const POLL_MS = 500;
const PAGE = 50;
/** Never chosen by "select all", and approved in a batch only after a second step that names them. */
const NEEDS_OWN_CONFIRMATION: ReadonlySet<string> = new Set(["high", "critical"]);
const PREVIEW_ENDS = 100;

/**
 * One selected item as the batch panel lists it: risk · operation on host ·
 * the command (already escaped by the hub: invisible characters are ⟨U+…⟩
 * tokens), a long one cut to its ends with every risky part still named.
 */
function BatchItem({ item }: { item: HeldAction }) {
  const segments = item.subject?.segments ?? [];
  const text = segments.map((s) => s.text).join("");
  const chars = [...text];
  const cut = chars.length > 2 * PREVIEW_ENDS + 40;
  const risky = segments.filter((s) => s.risky).map((s) => s.text);
  return (
    <li data-testid="batch-item" data-risk={item.risk}>
      <RiskBadge level={item.risk} /> · {item.operation} on <strong>{item.host ?? "?"}</strong> ·{" "}
      {item.subject === null ? (
        <span className="muted">no command</span>
      ) : (
        <Code>{cut ? `${chars.slice(0, PREVIEW_ENDS).join("")} ⋯ ${chars.slice(-PREVIEW_ENDS).join("")}` : text}</Code>
      )}
      {cut && risky.length > 0 ? (
        <>
          {" "}
          — risky: {risky.map((r, i) => (
            <mark key={i} className="risky">
              {[...r].length > 160 ? `${[...r].slice(0, 160).join("")}…` : r}
            </mark>
          ))}
        </>
      ) : null}
    </li>
  );
}

type Permission = "default" | "granted" | "denied" | "unsupported";

function notificationPermission(): Permission {
  return typeof window === "undefined" || !("Notification" in window) ? "unsupported" : Notification.permission;
}

/** Browser notifications for held actions that appear while the page is open (asked for on a button press only). */
function useHeldNotifications(items: readonly HeldAction[] | undefined) {
  const [permission, setPermission] = useState<Permission>("unsupported");
  const seen = useRef<Set<string> | null>(null);
  useEffect(() => setPermission(notificationPermission()), []);
  useEffect(() => {
    if (items === undefined) return;
    const ids = new Set(items.map((i) => i.approval_id));
    const before = seen.current;
    seen.current = ids;
    // The first load is what was already there: only later arrivals are news.
    if (before === null || permission !== "granted") return;
    for (const item of items) {
      if (before.has(item.approval_id)) continue;
      const n = new Notification(`Approval needed: ${commandLabel(item)}`, {
        body: `${item.risk} risk, requested by ${item.requester.name ?? "?"}. Open Leasehold to decide.`,
        tag: item.approval_id,
      });
      n.onclick = () => {
        window.focus();
        window.location.hash = item.approval_id;
      };
    }
  }, [items, permission]);
  const ask = async () => setPermission(await Notification.requestPermission());
  return { permission, ask };
}

/** Keys the queue answers when focus is not in a text field. */
const SHORTCUTS = new Set(["j", "k", "a", "d", "Escape"]);

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (el === null || typeof el.closest !== "function") return false;
  return el.isContentEditable || el.closest("input:not([type=checkbox]), textarea, select") !== null;
}

function toggleOf(id: string): HTMLElement | null {
  return document.getElementById(`approval-title-${id}`);
}

// eslint-disable-next-line max-lines-per-function -- the queue's order, selection, keyboard navigation and bulk decisions share one list state
export function ApprovalsQueue() {
  const trpc = useTRPC();
  const [offset, setOffset] = useState(0);
  const list = useQuery({
    ...trpc.approvals.list.queryOptions({ offset, limit: PAGE }),
    refetchInterval: POLL_MS,
    refetchIntervalInBackground: true,
    staleTime: 0,
  });
  const { batchDecide, pending } = useDecisions();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [message, setMessage] = useState<string | null>(null);
  const [batchReason, setBatchReason] = useState("");
  const [batchResults, setBatchResults] = useState<BatchResult[] | null>(null);
  const [batchError, setBatchError] = useState<string | null>(null);
  const [now, setNow] = useState(() => Date.now());
  const notifications = useHeldNotifications(list.data?.items);
  // Rows open in place; at most one form (deny, grant, confirmation) is open at a time.
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [form, setForm] = useState<{ id: string; mode: ItemMode } | null>(null);
  // Decisions made on this page: the row stays where it was and shows the outcome.
  const [decided, setDecided] = useState<Map<string, { item: HeldAction; decided: Decided }>>(new Map());
  const [linked, setLinked] = useState<string | null>(null);
  const emptyRef = useRef<HTMLParagraphElement>(null);

  // Deadlines count down against the hub's clock, not the browser's.
  const skew = useMemo(() => (list.data === undefined ? 0 : Date.parse(list.data.server_time) - list.dataUpdatedAt), [list.data, list.dataUpdatedAt]);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  // A link from the webhook or a notification (/approvals#<approval id>) puts its item first, open.
  useEffect(() => {
    const read = () => {
      const id = decodeURIComponent(window.location.hash.slice(1));
      if (id.length === 0) return;
      setLinked(id);
      setExpanded((current) => new Set(current).add(id));
    };
    read();
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);

  // Held items a client waits on first, then orphaned ones; most dangerous and soonest first within each; the linked one leads.
  const order = useCallback((a: HeldAction, b: HeldAction) => (a.approval_id === linked ? -1 : b.approval_id === linked ? 1 : livenessOrder(a, b) || queueOrder(a, b)), [linked]);
  const items = useMemo(() => [...(list.data?.items ?? [])].sort(order), [list.data, order]);
  // Every row shown: held ones and, in their place, those decided here.
  const rows = useMemo(() => {
    const held = new Set(items.map((i) => i.approval_id));
    const gone = [...decided.values()].filter((d) => !held.has(d.item.approval_id)).map((d) => d.item);
    return [...items, ...gone].sort(order);
  }, [items, decided, order]);
  // A selection never outlives its item (decided elsewhere, expired).
  const present = useMemo(() => new Set(items.map((i) => i.approval_id)), [items]);
  const chosen = items.filter((i) => selected.has(i.approval_id));
  const selectable = items.filter((i) => !NEEDS_OWN_CONFIRMATION.has(i.risk));
  const chosenHigh = chosen.filter((i) => NEEDS_OWN_CONFIRMATION.has(i.risk));
  // The confirmation holds for exactly the high-risk items it named; any change to them asks again.
  const highKey = chosenHigh.map((i) => i.approval_id).join(",");
  const [confirmedHigh, setConfirmedHigh] = useState<string | null>(null);
  const confirming = chosenHigh.length > 0 && confirmedHigh === highKey;

  // The linked item scrolls into view once it is there.
  const jumped = useRef(false);
  useEffect(() => {
    if (jumped.current || linked === null || !present.has(linked)) return;
    document.getElementById(linked)?.scrollIntoView({ block: "start" });
    jumped.current = true;
  }, [linked, present]);

  const select = (id: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set([...current].filter((x) => present.has(x)));
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  const toggle = (id: string, open: boolean) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (open) next.add(id);
      else next.delete(id);
      return next;
    });

  /** After a decision focus goes to the next held item (or the one before, or the empty-queue note): never to the page's body. */
  const focusAfter = useCallback(
    (id: string) => {
      const held = items.filter((i) => i.approval_id !== id && !decided.has(i.approval_id));
      const at = items.findIndex((i) => i.approval_id === id);
      const next = held.find((i) => items.indexOf(i) > at) ?? [...held].reverse().find((i) => items.indexOf(i) < at);
      requestAnimationFrame(() => {
        const target = next === undefined ? emptyRef.current : toggleOf(next.approval_id);
        target?.focus();
      });
    },
    [items, decided],
  );

  const onDecided = (item: HeldAction, result: Decided) => {
    setDecided((current) => new Map(current).set(item.approval_id, { item, decided: result }));
    setMessage(result.text);
    setForm(null);
    focusAfter(item.approval_id);
  };

  // j/k move between held items; a approves (high and critical after a second step); d opens the deny form; Escape closes a form.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!SHORTCUTS.has(event.key) || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key !== "Escape" && typing(event.target)) return;
      const open = items.filter((i) => !decided.has(i.approval_id));
      const row = (document.activeElement as HTMLElement | null)?.closest?.("article.approval");
      const at = row ? open.findIndex((i) => i.approval_id === row.id) : -1;
      const current = at >= 0 ? open[at] : undefined;
      if (event.key === "Escape") {
        if (form === null) return;
        const id = form.id;
        setForm(null);
        toggleOf(id)?.focus();
        event.preventDefault();
        return;
      }
      if (event.key === "j" || event.key === "k") {
        if (open.length === 0) return;
        const next = event.key === "j" ? open[at < 0 ? 0 : Math.min(open.length - 1, at + 1)] : open[at < 0 ? 0 : Math.max(0, at - 1)];
        if (next !== undefined) toggleOf(next.approval_id)?.focus();
        event.preventDefault();
        return;
      }
      if (current === undefined) return;
      event.preventDefault();
      toggle(current.approval_id, true);
      if (event.key === "d") setForm({ id: current.approval_id, mode: "deny" });
      else setForm({ id: current.approval_id, mode: approveNeedsConfirmation(current) ? "confirm" : "approve" });
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [items, decided, form]);

  const decideSelected = async (decision: "approve" | "deny") => {
    setBatchError(null);
    // High and critical items are approved in a batch only from the second step, which names each of them.
    if (decision === "approve" && chosenHigh.length > 0 && !confirming) {
      setConfirmedHigh(highKey);
      return;
    }
    setConfirmedHigh(null);
    setBatchResults(null);
    try {
      const { results } = await batchDecide(decision, chosen, decision === "deny" ? batchReason.trim() : undefined);
      setBatchResults(results);
      setSelected(new Set());
      const ok = results.filter((r) => r.ok).length;
      setDecided((current) => {
        const next = new Map(current);
        for (const r of results) {
          const item = chosen.find((i) => i.approval_id === r.approvalId);
          if (r.ok && r.state !== "pending" && item !== undefined) next.set(item.approval_id, { item, decided: { decision: decision === "approve" ? "approved" : "denied", text: "" } });
        }
        return next;
      });
      setMessage(`${decision === "approve" ? "Approved" : "Denied"} ${ok} of ${results.length} selected.`);
    } catch (e) {
      setBatchError(errorText(e));
    }
  };

  const held = items.filter((i) => !decided.has(i.approval_id));
  const orphanedCount = held.filter((i) => i.liveness?.state === "orphaned").length;
  return (
    <div className="approvals">
      <p className="muted approvals-summary" aria-live="polite" data-testid="approvals-summary" tabIndex={-1} ref={emptyRef}>
        {list.data === undefined
          ? " "
          : list.data.total === 0
            ? "Nothing is waiting."
            : `${list.data.total} waiting from ${list.data.by_requester.length} requester(s): ${list.data.by_requester.map((r) => `${r.requester.name ?? "?"} ${r.count}`).join(", ")}`}
      </p>
      {orphanedCount === 0 ? null : (
        <p className="approvals-orphaned-note" data-testid="approvals-orphaned-note">
          {orphanedCount} on this page {orphanedCount === 1 ? "is" : "are"} orphaned: no client is waiting for {orphanedCount === 1 ? "it" : "them"}. They are listed last, marked
          &ldquo;orphaned&rdquo;; an approved one still runs.
        </p>
      )}
      {message === null ? null : (
        <p role="status" className="approvals-message" data-testid="approvals-message">
          {message}
        </p>
      )}
      {chosen.length === 0 ? null : (
        <section className="card approvals-batch" aria-label="Decide the selected actions">
          <p>
            <strong>{chosen.length}</strong> selected. Each decision is bound to the action hash shown for it:
          </p>
          <ul className="approvals-batch-list" data-testid="batch-list">
            {chosen.map((item) => (
              <BatchItem key={item.approval_id} item={item} />
            ))}
          </ul>
          {confirming ? (
            <div className="approvals-batch-confirm" role="group" aria-labelledby="batch-confirm-title" data-testid="batch-confirm">
              <p id="batch-confirm-title">
                <strong>
                  This batch includes {chosenHigh.length} {chosenHigh.length === 1 ? "action" : "actions"} at high risk or above. Approving{" "}
                  {chosenHigh.length === 1 ? "it" : "them"} needs this separate confirmation:
                </strong>
              </p>
              <ul className="approvals-batch-list">
                {chosenHigh.map((item) => (
                  <BatchItem key={item.approval_id} item={item} />
                ))}
              </ul>
              <div className="form-row">
                <button type="button" className="danger" disabled={pending} onClick={() => void decideSelected("approve")}>
                  Yes, approve {chosenHigh.map((i) => `${commandLabel(i)} (${i.risk})`).join(", ")} with the rest
                </button>
                <button type="button" onClick={() => setConfirmedHigh(null)}>
                  Back
                </button>
              </div>
            </div>
          ) : null}
          <label htmlFor="batch-reason">Reason (needed to deny)</label>
          <input id="batch-reason" value={batchReason} onChange={(e) => setBatchReason(e.target.value)} />
          <div className="form-row">
            <button type="button" className="primary" disabled={pending || confirming} onClick={() => void decideSelected("approve")}>
              Approve selected ({chosen.length})
            </button>
            <button type="button" className="danger" disabled={pending || batchReason.trim().length === 0} onClick={() => void decideSelected("deny")}>
              Deny selected ({chosen.length})
            </button>
            <button type="button" onClick={() => setSelected(new Set())}>
              Clear selection
            </button>
          </div>
          {batchError === null ? null : <ErrorState>{batchError}</ErrorState>}
        </section>
      )}
      {batchResults === null || batchResults.every((r) => r.ok) ? null : (
        <ErrorState>
          Some selected actions were not decided:{" "}
          {batchResults
            .filter((r) => !r.ok)
            .map((r) => (r.ok ? "" : `${r.approvalId.slice(0, 8)}: ${r.error.message}`))
            .join("; ")}
        </ErrorState>
      )}
      {list.isPending ? (
        <Loading what="held actions" />
      ) : list.isError && list.data === undefined ? (
        <ErrorState>{errorText(list.error)}</ErrorState>
      ) : rows.length === 0 ? (
        <EmptyState>No held actions. New ones appear here on their own.</EmptyState>
      ) : (
        <>
          {list.isError ? <ErrorState>Not refreshed: {errorText(list.error)}</ErrorState> : null}
          <div className="approvals-list" id="queue">
            {rows.map((item) => {
              const done = decided.get(item.approval_id);
              return done !== undefined ? (
                <OutcomeRow key={item.approval_id} item={item} decided={done.decided} />
              ) : (
                <ApprovalItem
                  key={item.approval_id}
                  item={item}
                  nowMs={now + skew}
                  selected={selected.has(item.approval_id)}
                  onSelect={(on) => select(item.approval_id, on)}
                  expanded={expanded.has(item.approval_id)}
                  onToggle={(open) => toggle(item.approval_id, open)}
                  mode={form?.id === item.approval_id ? form.mode : "idle"}
                  setMode={(mode) => setForm(mode === "idle" ? null : { id: item.approval_id, mode })}
                  onDecided={(result) => onDecided(item, result)}
                  onMessage={setMessage}
                />
              );
            })}
          </div>
          <div className="approvals-toolbar">
            <label className="inline">
              <input
                type="checkbox"
                disabled={selectable.length === 0}
                checked={selectable.length > 0 && selectable.every((i) => selected.has(i.approval_id))}
                onChange={(e) => setSelected(e.target.checked ? new Set(selectable.map((i) => i.approval_id)) : new Set())}
              />{" "}
              Select all below high risk on this page
            </label>
            {selectable.length < held.length ? (
              <span className="hint" data-testid="select-all-excluded">
                {held.length - selectable.length} high or critical {held.length - selectable.length === 1 ? "action is" : "actions are"} never selected by this: choose each one itself.
              </span>
            ) : null}
          </div>
          {offset === 0 && list.data?.has_more !== true ? null : (
            <nav className="form-row" aria-label="Pages">
              <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                Previous
              </button>
              <span className="muted">
                {offset + 1}–{offset + items.length} of {list.data?.total ?? 0}
              </span>
              <button type="button" disabled={list.data?.has_more !== true} onClick={() => setOffset(offset + PAGE)}>
                Next
              </button>
            </nav>
          )}
        </>
      )}
      <div className="approvals-toolbar">
        <p className="hint" id="approvals-keys">
          Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>Enter</kbd> open, <kbd>a</kbd> approve (high and critical ask once more), <kbd>d</kbd> deny, <kbd>Esc</kbd> close a form.
        </p>
        {notifications.permission === "default" ? (
          <button type="button" onClick={() => void notifications.ask()}>
            Notify me of new held actions
          </button>
        ) : notifications.permission === "granted" ? (
          <span className="hint">Notifications on while this page is open.</span>
        ) : null}
      </div>
    </div>
  );
}
