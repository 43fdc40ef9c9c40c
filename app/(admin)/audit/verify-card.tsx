"use client";

import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { describeFailure, verifyExport, type VerifyReport } from "~/server/ledger/verify";
import { Badge, Card, Code, ErrorState } from "../../_components/ui";
import { sessionBindingHeaders } from "../../_lib/session-binding";
import { EXPORT_URL, exportFailure } from "./export";

/**
 * "Verify in this browser": downloads the export and runs
 * server/ledger/verify.ts — the same code as `leasehold verify` — here,
 * against keys the auditor pinned in this browser (the log key, and any
 * witness keys, each required on the final checkpoint as `--witness` is).
 * No server answer decides the verdict.
 */

export const PINNED_KEY_STORAGE = "leasehold.audit.pinnedLogKey";
export const PINNED_WITNESSES_STORAGE = "leasehold.audit.pinnedWitnessKeys";
const REQUIRE_PASSKEY_STORAGE = "leasehold.audit.requirePasskeyAtHigh";

type Run =
  | { state: "idle" }
  | { state: "running"; entries: number; total: number | null }
  | { state: "done"; report: VerifyReport; seconds: number; witnesses: number; requirePasskey: boolean }
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

function storedWitnesses(): string[] {
  try {
    const parsed: unknown = JSON.parse(window.localStorage.getItem(PINNED_WITNESSES_STORAGE) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === "string" && k !== "") : [];
  } catch {
    return [];
  }
}

/** The log key: what the hub serves is a suggestion when nothing is pinned and a tripwire when something is. */
function usePinnedLogKey() {
  const [pinned, setPinned] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const [suggested, setSuggested] = useState<string | null>(null);
  useEffect(() => {
    const stored = window.localStorage.getItem(PINNED_KEY_STORAGE);
    if (stored !== null && stored !== "") {
      setPinned(stored);
      setDraft(stored);
    }
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
  const pin = (key: string | null) => {
    if (key === null) window.localStorage.removeItem(PINNED_KEY_STORAGE);
    else window.localStorage.setItem(PINNED_KEY_STORAGE, key);
    setPinned(key);
  };
  return { pinned, draft, setDraft, suggested, pin };
}

// eslint-disable-next-line max-lines-per-function -- the pinned keys, the switch and the run they drive are one form
export function VerifyCard() {
  const inputId = useId();
  const witnessId = useId();
  const requireId = useId();
  const log = usePinnedLogKey();
  const [witnesses, setWitnesses] = useState<string[]>([]);
  const [witnessDraft, setWitnessDraft] = useState("");
  const [requirePasskey, setRequirePasskey] = useState(false);
  const [run, setRun] = useState<Run>({ state: "idle" });
  const running = useRef(false);

  useEffect(() => {
    setWitnesses(storedWitnesses());
    setRequirePasskey(window.localStorage.getItem(REQUIRE_PASSKEY_STORAGE) === "1");
  }, []);

  function saveWitnesses(next: string[]) {
    window.localStorage.setItem(PINNED_WITNESSES_STORAGE, JSON.stringify(next));
    setWitnesses(next);
    setRun({ state: "idle" });
  }

  function pin(event: FormEvent) {
    event.preventDefault();
    const key = log.draft.trim();
    if (key === "") return;
    log.pin(key);
    setRun({ state: "idle" });
  }

  function pinWitness(event: FormEvent) {
    event.preventDefault();
    const key = witnessDraft.trim();
    if (key === "" || witnesses.includes(key)) return;
    saveWitnesses([...witnesses, key]);
    setWitnessDraft("");
  }

  function toggleRequirePasskey(on: boolean) {
    window.localStorage.setItem(REQUIRE_PASSKEY_STORAGE, on ? "1" : "0");
    setRequirePasskey(on);
    setRun({ state: "idle" });
  }

  async function verify() {
    if (log.pinned === null || running.current) return;
    running.current = true;
    const started = performance.now();
    setRun({ state: "running", entries: 0, total: null });
    try {
      const response = await fetch(EXPORT_URL, { cache: "no-store", headers: sessionBindingHeaders() });
      if (!response.ok || response.body === null) throw new Error(await exportFailure(response));
      const header = Number(response.headers.get("x-leasehold-entries"));
      const total = Number.isSafeInteger(header) && header >= 0 ? header : null;
      setRun({ state: "running", entries: 0, total });
      const report = await verifyExport(chunksOf(response.body), log.pinned, {
        witnessKeys: witnesses,
        ...(requirePasskey ? { requirePasskeyFrom: "high" as const } : {}),
        onProgress: ({ entries }) => setRun({ state: "running", entries, total }),
      });
      setRun({ state: "done", report, seconds: (performance.now() - started) / 1000, witnesses: witnesses.length, requirePasskey });
    } catch (error) {
      setRun({ state: "error", message: (error as Error).message });
    } finally {
      running.current = false;
    }
  }

  const servedDiffers = log.pinned !== null && log.suggested !== null && log.pinned !== log.suggested;
  return (
    <Card title="Verify in this browser" className="audit-verify">
      <p className="muted">
        Downloads the export and checks every entry hash, the Merkle tree, each checkpoint signature, the witness cosignatures and every passkey-signed approval here,
        with the same code as <Code>leasehold verify</Code>. Only the keys you pin are trusted.
      </p>
      <form onSubmit={pin}>
        <label htmlFor={inputId}>Log public key (pinned in this browser)</label>
        <input
          id={inputId}
          data-testid="audit-key-input"
          value={log.draft}
          onChange={(e) => log.setDraft(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          className="code"
          placeholder="origin+keyid+base64key"
        />
        {log.pinned === null && log.suggested !== null && log.draft.trim() === log.suggested ? (
          <p className="hint audit-warning" data-testid="audit-key-warning">
            Suggested by this hub (<Code>/.well-known/leasehold/ledger-key</Code>). Pinning what the hub serves only proves the log is consistent with the
            hub&apos;s own key; compare it with a key you obtained out of band (printed at first start, <Code>leasehold ledger key</Code>) before pinning.
          </p>
        ) : null}
        <div className="form-row">
          <button type="submit" data-testid="audit-pin" disabled={log.draft.trim() === "" || log.draft.trim() === log.pinned}>
            {log.pinned === null ? "Pin this key" : "Pin the new key"}
          </button>
          {log.pinned !== null ? (
            <button type="button" onClick={() => (log.pin(null), setRun({ state: "idle" }))}>
              Forget pinned key
            </button>
          ) : null}
          <button type="button" className="primary" data-testid="audit-verify" onClick={() => void verify()} disabled={log.pinned === null || run.state === "running"}>
            Verify in this browser
          </button>
        </div>
        {log.pinned === null ? (
          <p className="hint">Pin a key to verify.</p>
        ) : (
          <p className="hint" data-testid="audit-pinned">
            Pinned: <Code>{log.pinned}</Code>
          </p>
        )}
        {servedDiffers ? (
          <p className="hint audit-warning" role="alert" data-testid="audit-key-changed">
            This hub now serves a different log key (<Code>{log.suggested}</Code>) than the one you pinned. Verification uses your pinned key; find out why the
            key changed before trusting the new one.
          </p>
        ) : null}
      </form>
      <form onSubmit={pinWitness} className="audit-witnesses">
        <label htmlFor={witnessId}>Witness keys (each must have cosigned the latest checkpoint)</label>
        <input
          id={witnessId}
          data-testid="audit-witness-input"
          value={witnessDraft}
          onChange={(e) => setWitnessDraft(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          className="code"
          placeholder="witness-name+keyid+base64key (a cosignature/v1 key)"
        />
        <div className="form-row">
          <button type="submit" data-testid="audit-witness-pin" disabled={witnessDraft.trim() === "" || witnesses.includes(witnessDraft.trim())}>
            Pin witness key
          </button>
        </div>
        {witnesses.length === 0 ? null : (
          <ul className="audit-witness-list" data-testid="audit-witness-list">
            {witnesses.map((w) => (
              <li key={w}>
                <Code>{w}</Code>{" "}
                <button type="button" onClick={() => saveWitnesses(witnesses.filter((k) => k !== w))} aria-label={`Forget witness key ${w.split("+")[0] ?? w}`}>
                  Forget
                </button>
              </li>
            ))}
          </ul>
        )}
      </form>
      <p className="audit-require">
        <input id={requireId} type="checkbox" checked={requirePasskey} onChange={(e) => toggleRequirePasskey(e.target.checked)} data-testid="audit-require-passkey" />{" "}
        <label htmlFor={requireId}>Require a passkey at high risk: an approval at high or critical risk without a passkey signature fails verification</label>
      </p>
      <VerifyResult run={run} />
    </Card>
  );
}

function PasskeyLine({ report, required }: { report: VerifyReport; required: boolean }) {
  const { signed, signedGrants, unsigned, unsignedGrants, passkeys } = report.approvals;
  const gaps = unsigned.length + unsignedGrants.length;
  return (
    <>
      <dt>Passkeys</dt>
      <dd data-testid="audit-passkeys">
        {signed} passkey-signed approval{signed === 1 ? "" : "s"} and {signedGrants} passkey-signed grant{signedGrants === 1 ? "" : "s"} verified ({passkeys} registered key
        {passkeys === 1 ? "" : "s"} in the export)
        {gaps === 0 ? "" : `; ${gaps} high or critical action${gaps === 1 ? "" : "s"} approved or granted without one${required ? "" : " (reported, not required)"}`}
      </dd>
    </>
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
    const { verified, unchecked, witnesses } = report.cosignatures;
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
          <dd data-testid="audit-cosignatures-verdict">
            {verified} verified with pinned witness keys{witnesses.length > 0 ? ` (${witnesses.join(", ")})` : ""}; {unchecked} intact but unchecked
            {run.witnesses === 0 ? " (no witness key pinned)" : ""}
            {report.finalCosigners.length > 0 ? `; the latest checkpoint is cosigned by every pinned witness: ${report.finalCosigners.join(", ")}` : ""}
          </dd>
          <PasskeyLine report={report} required={run.requirePasskey} />
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
