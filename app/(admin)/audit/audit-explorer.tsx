"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { sessionBindingHeaders } from "../../_lib/session-binding";
import { EXPORT_URL, exportFailure } from "./export";

/**
 * The audit explorer's export button and checkpoint list (the verifier is
 * verify-card.tsx, the entries entries-card.tsx). Showing the entries and
 * checkpoints is the hub's word; the verdict is not — it comes only from the
 * browser verifying the export against keys the auditor pinned.
 */

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
      if (!response.ok) throw new Error(await exportFailure(response));
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
