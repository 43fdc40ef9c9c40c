"use client";

import Link from "next/link";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { neutraliseTerminalText } from "~/server/text/terminal";
import { needsReauth, useReauth } from "../../_components/reauth-prompt";
import { useTRPC } from "../../_components/trpc";
import { Badge, Card, Code, EmptyState, ErrorState, Loading, RiskBadge } from "../../_components/ui";
import { errorText } from "../../_lib/errors";
import { DECISION_LABEL } from "../_dashboard/labels";

interface Field {
  name: string;
  type: string;
  required: boolean;
  description: string;
  enum: string[] | null;
  multiline: boolean;
}

type Leasehold = { code?: string; message?: string; details?: Record<string, unknown> } | null | undefined;
const leaseholdOf = (error: unknown): Leasehold => (error as { data?: { leasehold?: Leasehold } } | null)?.data?.leasehold;

/** What the person sees after pressing Run. */
type Phase =
  | { kind: "idle" }
  | { kind: "running" }
  | { kind: "held"; actionId: string; risk: string; reasons: Array<{ message?: string; rule?: string }>; deadline: string | null }
  | { kind: "done"; outcome: Outcome }
  | { kind: "failed"; error: unknown; actionId: string | null };

interface Outcome {
  action_id: string;
  decision: string;
  risk: { level: string; reasons: Array<{ message?: string; rule?: string }> };
  result?: {
    state: string;
    exit: { code: number | null; signal: string | null; timed_out: boolean } | null;
    output: { stdout: string; stderr: string; stdout_truncated: boolean; stderr_truncated: boolean };
    structured: Record<string, unknown> | null;
    evidence: { digest: string; tier: string | null };
  };
}

/** A form value as the operation's schema types it; undefined leaves an optional field out. */
function typed(field: Field, raw: string | boolean): unknown {
  if (field.type === "boolean") return raw === true ? true : field.required ? false : undefined;
  const text = String(raw);
  if (text === "" && !field.required) return undefined;
  if (field.type === "integer" || field.type === "number") return Number(text);
  if (field.type === "object" || field.type === "array") return JSON.parse(text) as unknown;
  return text;
}

// eslint-disable-next-line max-lines-per-function -- the console's form, its held/running/finished states and the output stream share one run
export function ConsoleRunner() {
  const trpc = useTRPC();
  const targets = useQuery(trpc.consoleForm.targets.queryOptions());
  const [host, setHost] = useState("");
  const [operation, setOperation] = useState("run_command");
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [phase, setPhase] = useState<Phase>({ kind: "idle" });
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);

  const submit = useMutation(trpc.console.submit.mutationOptions());
  const { ask, prompt } = useReauth();
  const resume = useMutation(trpc.console.resume.mutationOptions());

  const op = useMemo(() => targets.data?.operations.find((o) => o.name === operation), [targets.data, operation]);
  useEffect(() => {
    if (targets.data === undefined || host !== "") return;
    setHost(targets.data.hosts.find((h) => h.name === "local")?.name ?? targets.data.hosts[0]?.name ?? "");
  }, [targets.data, host]);

  /** Handles an answer or an error; while held, waits again (console.resume) until a person decides. */
  async function settle(run: () => Promise<unknown>, again?: () => void): Promise<void> {
    for (;;) {
      try {
        const outcome = (await run()) as Outcome;
        if (alive.current) setPhase({ kind: "done", outcome });
        return;
      } catch (error) {
        const l = leaseholdOf(error);
        const actionId = typeof l?.details?.["action_id"] === "string" ? (l.details["action_id"] as string) : null;
        if (l?.code === "APPROVAL_PENDING" && actionId !== null && alive.current) {
          setPhase({
            kind: "held",
            actionId,
            risk: String(l.details?.["risk"] ?? "?"),
            reasons: Array.isArray(l.details?.["reasons"]) ? (l.details["reasons"] as Array<{ message?: string; rule?: string }>) : [],
            deadline: typeof l.details?.["deadline"] === "string" ? (l.details["deadline"] as string) : null,
          });
          run = () => resume.mutateAsync({ actionId, waitMs: 25_000 });
          continue;
        }
        if (again !== undefined && needsReauth(error) && alive.current) {
          // Past the re-authentication window: ask for the password, then submit the same request again.
          setPhase({ kind: "idle" });
          ask(again);
          return;
        }
        if (alive.current) setPhase({ kind: "failed", error, actionId });
        return;
      }
    }
  }

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (op === undefined || host === "") return;
    const args: Record<string, unknown> = { host };
    try {
      for (const f of op.fields) {
        const v = typed(f, values[f.name] ?? (f.type === "boolean" ? false : ""));
        if (v !== undefined) args[f.name] = v;
      }
    } catch {
      setFormError("a JSON field does not parse");
      return;
    }
    setFormError(null);
    // waitMs 0: a held action answers APPROVAL_PENDING at once, so the page says "held" right away and then waits with resume.
    const start = () => {
      setPhase({ kind: "running" });
      void settle(() => submit.mutateAsync({ operation: op.name, arguments: args, waitMs: 0 }), start);
    };
    start();
  };

  if (targets.isPending) return <Loading what="hosts and operations" />;
  if (targets.isError) return <ErrorState>Console unavailable: {errorText(targets.error)}</ErrorState>;
  if (targets.data.hosts.length === 0) return <EmptyState>No host is enrolled yet: enrol one on the Hosts page.</EmptyState>;
  const busy = phase.kind === "running" || phase.kind === "held";

  return (
    <div className="console-grid">
      <Card title="Run">
        <form onSubmit={onSubmit} aria-describedby="console-note">
          <label htmlFor="console-host">Host</label>
          <select id="console-host" value={host} onChange={(e) => setHost(e.target.value)}>
            {targets.data.hosts.map((h) => (
              <option key={h.name} value={h.name}>
                {h.name} — {h.online ? "online" : "offline"}, tier {h.tier ?? "?"}
              </option>
            ))}
          </select>
          <label htmlFor="console-operation">Operation</label>
          <select
            id="console-operation"
            value={operation}
            onChange={(e) => {
              setOperation(e.target.value);
              setValues({});
            }}
          >
            {targets.data.operations.map((o) => (
              <option key={o.name} value={o.name}>
                {o.name} ({o.capability}{o.mutating ? ", may change the host" : ", read-only"})
              </option>
            ))}
          </select>
          {op === undefined ? null : (
            <>
              <p className="hint">{op.description}</p>
              {op.fields.map((f) => {
                const id = `console-field-${f.name}`;
                const value = values[f.name];
                const set = (v: string | boolean) => setValues((old) => ({ ...old, [f.name]: v }));
                return (
                  <div key={f.name}>
                    <label htmlFor={id}>
                      {f.name}
                      {f.required ? " (required)" : ""}
                    </label>
                    {f.type === "boolean" ? (
                      <input id={id} type="checkbox" checked={value === true} onChange={(e) => set(e.target.checked)} />
                    ) : f.enum !== null ? (
                      <select id={id} value={String(value ?? "")} onChange={(e) => set(e.target.value)} required={f.required}>
                        {f.required ? null : <option value="">—</option>}
                        {f.enum.map((v) => (
                          <option key={v} value={v}>
                            {v}
                          </option>
                        ))}
                      </select>
                    ) : f.multiline || f.type === "object" || f.type === "array" ? (
                      <textarea id={id} rows={f.multiline ? 3 : 2} value={String(value ?? "")} onChange={(e) => set(e.target.value)} required={f.required} spellCheck={false} className="console-code" placeholder={f.type === "object" ? "{}" : f.type === "array" ? "[]" : ""} />
                    ) : (
                      <input id={id} type={f.type === "integer" || f.type === "number" ? "number" : "text"} value={String(value ?? "")} onChange={(e) => set(e.target.value)} required={f.required} spellCheck={false} />
                    )}
                    {f.description === "" ? null : <p className="hint">{f.description}</p>}
                  </div>
                );
              })}
            </>
          )}
          {formError === null ? null : <ErrorState>{formError}</ErrorState>}
          <div className="form-row">
            <button type="submit" className="primary" disabled={busy || op === undefined}>
              {busy ? "Running…" : "Run"}
            </button>
          </div>
          <p id="console-note" className="hint">
            Read-only actions run at once; anything riskier waits for an approval (yours or another approver&apos;s) on the Approvals page.
          </p>
        </form>
      </Card>
      <Card title="Result">
        <ConsoleResult phase={phase} />
      </Card>
      {prompt}
    </div>
  );
}

function Reasons({ reasons }: { reasons: Array<{ message?: string; rule?: string }> }) {
  if (reasons.length === 0) return null;
  return (
    <ul>
      {reasons.map((r, i) => (
        <li key={i}>
          {neutraliseTerminalText(r.message ?? "").text} <span className="muted">({r.rule})</span>
        </li>
      ))}
    </ul>
  );
}

function ConsoleResult({ phase }: { phase: Phase }) {
  if (phase.kind === "idle") return <EmptyState>Pick a host and an operation, then Run.</EmptyState>;
  if (phase.kind === "running") return <Loading what="the result (assessing, then running on the host)" />;
  if (phase.kind === "held") {
    return (
      <div data-testid="console-held" role="status" aria-live="polite">
        <p>
          <Badge tone="warn">held for approval</Badge> <RiskBadge level={phase.risk} /> Waiting for a person to decide
          {phase.deadline === null ? "" : ` before ${new Date(phase.deadline).toLocaleTimeString()}`}…
        </p>
        <Reasons reasons={phase.reasons} />
        <p>
          <Link href="/approvals">Open approvals</Link> · <Link href={`/actions/${phase.actionId}`}>Action page</Link>
        </p>
      </div>
    );
  }
  if (phase.kind === "failed") {
    return (
      <div data-testid="console-error">
        <ErrorState>{errorText(phase.error)}</ErrorState>
        {phase.actionId === null ? null : <Link href={`/actions/${phase.actionId}`}>Action page</Link>}
      </div>
    );
  }
  const o = phase.outcome;
  const r = o.result;
  return (
    <div data-testid="console-result">
      <p>
        <RiskBadge level={o.risk.level} /> <Badge tone="info">{DECISION_LABEL[o.decision] ?? o.decision}</Badge>{" "}
        {r === undefined ? "dispatched" : <span data-testid="console-exit">exit {r.exit?.code ?? "none"}{r.exit?.timed_out ? " (timed out)" : ""}</span>}
        {r === undefined ? null : <span className="muted"> · tier {r.evidence.tier ?? "?"}</span>}
      </p>
      <Reasons reasons={o.risk.reasons} />
      {r === undefined ? null : (
        <>
          <h3 className="detail-sub">stdout{r.output.stdout_truncated ? " (truncated)" : ""}</h3>
          <Code block>
            <span data-testid="console-stdout">{neutraliseTerminalText(r.output.stdout).text || " "}</span>
          </Code>
          {r.output.stderr === "" ? null : (
            <>
              <h3 className="detail-sub">stderr{r.output.stderr_truncated ? " (truncated)" : ""}</h3>
              <Code block>{neutraliseTerminalText(r.output.stderr).text}</Code>
            </>
          )}
          {r.structured === null || r.structured["sandbox"] !== undefined ? null : (
            <>
              <h3 className="detail-sub">Result</h3>
              <Code block>{neutraliseTerminalText(JSON.stringify(r.structured, null, 2)).text}</Code>
            </>
          )}
        </>
      )}
      <p>
        <Link href={`/actions/${o.action_id}`} data-testid="console-action-link">
          Action page: timeline, evidence, receipt
        </Link>
      </p>
    </div>
  );
}
