"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { describeFailure, verifyExport, type VerifyReport } from "~/server/ledger/verify";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { sessionBindingHeaders } from "../../_lib/session-binding";

/**
 * The audit explorer. Showing the entries and checkpoints is the hub's word;
 * the verdict is not: "Verify in this browser" downloads the export and runs
 * server/ledger/verify.ts — the same code as `leasehold verify` — right
 * here, against a log key the auditor pinned in this browser. No server
 * answer decides it.
 */

export const PINNED_KEY_STORAGE = "leasehold.audit.pinnedLogKey";
const EXPORT_URL = "/api/audit/export";

/**
 * Downloads the export through fetch, not a plain link: the route wants the
 * session's binding header, which a navigation cannot send.
 */
export function ExportButton() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const response = await fetch(EXPORT_URL, { cache: "no-store", headers: sessionBindingHeaders() });
      if (!response.ok) {
        const payload = (await response.json().catch(() => null)) as { code?: string; message?: string } | null;
        throw new Error(payload?.message !== undefined ? payload.message : `export download failed (HTTP ${response.status})`);
      }
      const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? "leasehold-ledger.jsonl";
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement("a");
      link.href = url;
      link.download = name;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className="button" onClick={() => void save()} disabled={busy} data-testid="audit-export">
        {busy ? "Exporting…" : "Export"}
      </button>
      {error === null ? null : <span role="alert">{error}</span>}
    </>
  );
}

type Run =
  | { state: "idle" }
  | { state: "running"; entries: number; total: number | null }
  | { state: "done"; report: VerifyReport; seconds: number }
  | { state: "error"; message: string };

/** The export body as an async iterable of byte chunks (a fetch stream). */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

export function VerifyCard() {
  const inputId = useId();
  const [pinned, setPinned] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const [suggested, setSuggested] = useState<string | null>(null);
  const [run, setRun] = useState<Run>({ state: "idle" });
  const running = useRef(false);

  useEffect(() => {
    const stored = window.localStorage.getItem(PINNED_KEY_STORAGE);
    if (stored !== null && stored !== "") {
      setPinned(stored);
      setDraft(stored);
    }
    // What the hub serves: a suggestion when nothing is pinned, a tripwire when something is.
    let cancelled = false;
    fetch("/.well-known/leasehold/ledger-key", { cache: "no-store" })
      .then(async (r) => (r.ok ? (await r.text()).trim() : null))
      .then((key) => {
        if (cancelled || key === null || key === "") return;
        setSuggested(key);
        setDraft((d) => (d === "" ? key : d));
      })
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, []);

  function pin(event: FormEvent) {
    event.preventDefault();
    const key = draft.trim();
    if (key === "") return;
    window.localStorage.setItem(PINNED_KEY_STORAGE, key);
    setPinned(key);
    setRun({ state: "idle" });
  }

  function unpin() {
    window.localStorage.removeItem(PINNED_KEY_STORAGE);
    setPinned(null);
    setRun({ state: "idle" });
  }

  async function verify() {
    if (pinned === null || running.current) return;
    running.current = true;
    const started = performance.now();
    setRun({ state: "running", entries: 0, total: null });
    try {
      const response = await fetch(EXPORT_URL, { cache: "no-store", headers: sessionBindingHeaders() });
      if (!response.ok || response.body === null) {
        const payload = (await response.json().catch(() => null)) as { code?: string; message?: string } | null;
        throw new Error(payload?.message !== undefined ? payload.message : `export download failed (HTTP ${response.status})`);
      }
      const header = Number(response.headers.get("x-leasehold-entries"));
      const total = Number.isSafeInteger(header) && header >= 0 ? header : null;
      setRun({ state: "running", entries: 0, total });
      const report = await verifyExport(chunksOf(response.body), pinned, {
        onProgress: ({ entries }) => setRun({ state: "running", entries, total }),
      });
      setRun({ state: "done", report, seconds: (performance.now() - started) / 1000 });
    } catch (error) {
      setRun({ state: "error", message: (error as Error).message });
    } finally {
      running.current = false;
    }
  }

  const servedDiffers = pinned !== null && suggested !== null && pinned !== suggested;
  return (
    <Card title="Verify in this browser" className="audit-verify">
      <p className="muted">
        Downloads the export and checks every entry hash, the Merkle tree, each checkpoint signature and the witness cosignatures here, with the same code as{" "}
        <Code>leasehold verify</Code>. Only the key you pin is trusted.
      </p>
      <form onSubmit={pin}>
        <label htmlFor={inputId}>Log public key (pinned in this browser)</label>
        <input
          id={inputId}
          data-testid="audit-key-input"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          className="code"
          placeholder="origin+keyid+base64key"
        />
        {pinned === null && suggested !== null && draft.trim() === suggested ? (
          <p className="hint audit-warning" data-testid="audit-key-warning">
            Suggested by this hub (<Code>/.well-known/leasehold/ledger-key</Code>). Pinning what the hub serves only proves the log is consistent with the
            hub&apos;s own key; compare it with a key you obtained out of band (printed at first start, <Code>leasehold ledger key</Code>) before pinning.
          </p>
        ) : null}
        <div className="form-row">
          <button type="submit" data-testid="audit-pin" disabled={draft.trim() === "" || draft.trim() === pinned}>
            {pinned === null ? "Pin this key" : "Pin the new key"}
          </button>
          {pinned !== null ? (
            <button type="button" onClick={unpin}>
              Forget pinned key
            </button>
          ) : null}
          <button type="button" className="primary" data-testid="audit-verify" onClick={() => void verify()} disabled={pinned === null || run.state === "running"}>
            Verify in this browser
          </button>
        </div>
        {pinned === null ? (
          <p className="hint">Pin a key to verify.</p>
        ) : (
          <p className="hint" data-testid="audit-pinned">
            Pinned: <Code>{pinned}</Code>
          </p>
        )}
        {servedDiffers ? (
          <p className="hint audit-warning" role="alert" data-testid="audit-key-changed">
            This hub now serves a different log key (<Code>{suggested}</Code>) than the one you pinned. Verification uses your pinned key; find out why the
            key changed before trusting the new one.
          </p>
        ) : null}
      </form>
      <VerifyResult run={run} />
    </Card>
  );
}

function VerifyResult({ run }: { run: Run }) {
  if (run.state === "idle") return null;
  if (run.state === "running") {
    return (
      <div className="audit-progress" role="status" aria-live="polite" data-testid="audit-progress">
        <progress value={run.entries} max={run.total ?? undefined} aria-label="entries checked" />
        <span>
          <span className="spinner" aria-hidden="true" /> {run.entries} {run.total === null ? "" : `of ${run.total} `}entries checked…
        </span>
      </div>
    );
  }
  if (run.state === "error") return <ErrorState>Could not verify: {run.message}</ErrorState>;
  const { report, seconds } = run;
  if (report.ok) {
    return (
      <div className="audit-verdict audit-verdict-ok" role="status" data-testid="audit-verdict">
        <p>
          <Badge tone="ok">VERIFIED</Badge> in {seconds.toFixed(2)} s: all {report.entries} entries are covered by {report.checkpointsVerified} log-signed checkpoints whose roots
          match the recomputed tree, so the log was only appended to.
        </p>
        <dl>
          <dt>Log</dt>
          <dd>{report.origin}</dd>
          <dt>Latest checkpoint</dt>
          <dd>
            size {report.latestCheckpoint?.size}, root <Code>{report.latestCheckpoint?.root}</Code>
          </dd>
          <dt>Cosignatures</dt>
          <dd>
            {report.cosignatures.unchecked} intact (signatures valid; witness keys not pinned here)
          </dd>
        </dl>
      </div>
    );
  }
  const failure = report.failure ?? { line: 0, reason: "unknown failure" };
  return (
    <div className="audit-verdict audit-verdict-bad" role="alert" data-testid="audit-verdict">
      <p>
        <Badge tone="err">FAILED</Badge>{" "}
        {failure.index !== undefined ? (
          <strong data-testid="audit-bad-index">First bad index: {failure.index}</strong>
        ) : failure.range !== undefined ? (
          <strong data-testid="audit-bad-index">
            Bad entry within indices {failure.range.from}..{failure.range.to}
          </strong>
        ) : (
          <strong>The export does not verify</strong>
        )}
      </p>
      <p className="code">{describeFailure(failure)}</p>
      <p className="muted">
        {report.entries} entries and {report.checkpointsVerified} checkpoints checked before the failure.
      </p>
    </div>
  );
}

function shortDigest(value: string): string {
  return value.startsWith("sha256:") ? `${value.slice(0, 15)}…` : value;
}

export function EntriesCard() {
  const trpc = useTRPC();
  const [cursors, setCursors] = useState<(number | undefined)[]>([undefined]);
  const [filter, setFilter] = useState<{ type?: string; actionId?: string }>({});
  const [typeDraft, setTypeDraft] = useState("");
  const [actionDraft, setActionDraft] = useState("");
  const before = cursors.at(-1);
  const summary = useQuery(trpc.audit.summary.queryOptions());
  const entries = useQuery(trpc.audit.entries.queryOptions({ limit: 25, ...filter, ...(before === undefined ? {} : { before }) }));
  const typeId = useId();
  const actionId = useId();

  function apply(event: FormEvent) {
    event.preventDefault();
    setFilter({ ...(typeDraft === "" ? {} : { type: typeDraft }), ...(actionDraft.trim() === "" ? {} : { actionId: actionDraft.trim() }) });
    setCursors([undefined]);
  }

  return (
    <Card title="Entries" className="audit-entries">
      {summary.data !== undefined ? (
        <p className="muted" data-testid="audit-summary">
          {summary.data.integrated} entries integrated{summary.data.pending > 0 ? `, ${summary.data.pending} waiting` : ""}
          {summary.data.latestCheckpoint !== null ? ` · latest checkpoint at size ${summary.data.latestCheckpoint.size}` : ""}
        </p>
      ) : null}
      <form className="audit-filter" onSubmit={apply}>
        <div>
          <label htmlFor={typeId}>Type</label>
          <select id={typeId} value={typeDraft} onChange={(e) => setTypeDraft(e.target.value)} data-testid="audit-filter-type">
            <option value="">all types</option>
            {(summary.data?.entryTypes ?? []).map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={actionId}>Action id</label>
          <input id={actionId} value={actionDraft} onChange={(e) => setActionDraft(e.target.value)} placeholder="e.g. act_…" data-testid="audit-filter-action" />
        </div>
        <div className="audit-filter-buttons">
          <button type="submit">Filter</button>
        </div>
      </form>
      {entries.isPending ? (
        <Loading what="entries" />
      ) : entries.isError ? (
        <ErrorState>{errorText(entries.error)}</ErrorState>
      ) : entries.data.entries.length === 0 ? (
        <EmptyState>{filter.type !== undefined || filter.actionId !== undefined ? "No entries match this filter." : "The log has no integrated entries yet."}</EmptyState>
      ) : (
        <>
          <div className="table-wrap">
            <table className="audit-table" data-testid="audit-entries">
              <thead>
                <tr>
                  <th scope="col">Index</th>
                  <th scope="col">Type</th>
                  <th scope="col">Time</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Data</th>
                </tr>
              </thead>
              <tbody>
                {entries.data.entries.map((e) => (
                  <tr key={e.index} data-testid="audit-entry">
                    <td data-label="Index">{e.index}</td>
                    <td data-label="Type" className="nowrap">
                      <Code>{e.type}</Code>
                    </td>
                    <td data-label="Time">{e.time === "" ? "—" : new Date(e.time).toLocaleString()}</td>
                    <td data-label="Action">{e.actionId === null ? "—" : <Code>{e.actionId}</Code>}</td>
                    <td data-label="Actor" className="nowrap">
                      <Code>{shortDigest(e.actor)}</Code>
                    </td>
                    <td data-label="Data" className="audit-data">
                      <Code>{e.summary}</Code>
                    </td>
                  </tr>
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

export function CheckpointsCard() {
  const trpc = useTRPC();
  const [cursors, setCursors] = useState<(number | undefined)[]>([undefined]);
  const before = cursors.at(-1);
  const checkpoints = useQuery(trpc.audit.checkpoints.queryOptions({ limit: 10, ...(before === undefined ? {} : { before }) }));
  return (
    <Card title="Checkpoints and witness cosignatures" className="audit-checkpoints">
      {checkpoints.isPending ? (
        <Loading what="checkpoints" />
      ) : checkpoints.isError ? (
        <ErrorState>{errorText(checkpoints.error)}</ErrorState>
      ) : checkpoints.data.checkpoints.length === 0 ? (
        <EmptyState>No checkpoint yet: the log signs one as soon as its first entries are integrated.</EmptyState>
      ) : (
        <>
          <ul className="audit-checkpoint-list" data-testid="audit-checkpoints">
            {checkpoints.data.checkpoints.map((c) => (
              <li key={c.size} data-testid="audit-checkpoint">
                <div className="audit-checkpoint-head">
                  <strong>Size {c.size}</strong>
                  <span className="muted">{new Date(c.createdAt).toLocaleString()}</span>
                  {c.cosignatures.length > 0 ? (
                    <Badge tone="ok">
                      {c.cosignatures.length} cosignature{c.cosignatures.length === 1 ? "" : "s"}
                    </Badge>
                  ) : (
                    <Badge tone="neutral">not cosigned</Badge>
                  )}
                </div>
                <p className="audit-root">
                  root <Code>{c.root}</Code>
                </p>
                {c.cosignatures.length > 0 ? (
                  <ul className="audit-cosignatures">
                    {c.cosignatures.map((s) => (
                      <li key={s.keyId} data-testid="audit-cosignature">
                        <Code>{s.witness}</Code> <span className="muted">key {s.keyId}</span>
                        {s.timestamp !== null ? <span className="muted"> · signed {new Date(s.timestamp * 1000).toLocaleString()}</span> : null}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </li>
            ))}
          </ul>
          <div className="form-row">
            <button type="button" onClick={() => setCursors((c) => c.slice(0, -1))} disabled={cursors.length <= 1}>
              ← Newer
            </button>
            <button type="button" onClick={() => setCursors((c) => [...c, checkpoints.data.nextBefore ?? undefined])} disabled={checkpoints.data.nextBefore === null}>
              Older →
            </button>
          </div>
        </>
      )}
    </Card>
  );
}
