/**
 * The admin's design system: a handful of components every page uses, so
 * states look and read the same everywhere. No hooks here — usable from
 * server and client components alike. Styling lives in app/globals.css.
 */
import type { ReactNode } from "react";

export function PageHeader({ title, description, actions }: { title: string; description?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="page-header">
      <div>
        <h1>{title}</h1>
        {description === undefined ? null : <p className="muted">{description}</p>}
      </div>
      {actions === undefined ? null : <div className="page-actions">{actions}</div>}
    </div>
  );
}

export function Card({ title, children, className }: { title?: ReactNode; children: ReactNode; className?: string }) {
  return (
    <section className={`card${className ? ` ${className}` : ""}`}>
      {title === undefined ? null : <h2 className="card-title">{title}</h2>}
      {children}
    </section>
  );
}

/** Loading: says what is loading, announced politely to screen readers. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function EmptyState({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

/** An error with its stable code, announced to screen readers. */
export function ErrorState({ children }: { children: ReactNode }) {
  return (
    <p className="state state-error" role="alert">
      {children}
    </p>
  );
}

export type RiskLevel = "read_only" | "low" | "medium" | "high" | "critical";

export function RiskBadge({ level }: { level: string }) {
  return <span className={`badge risk-${level}`}>{level.replace("_", "-")}</span>;
}

export function Badge({ tone = "neutral", children }: { tone?: "neutral" | "ok" | "warn" | "err" | "info"; children: ReactNode }) {
  return <span className={`badge tone-${tone}`}>{children}</span>;
}

/** Text a person must read exactly (commands, hashes): monospace, wrapped, selectable. */
export function Code({ children, block = false }: { children: ReactNode; block?: boolean }) {
  return block ? <pre className="code-block">{children}</pre> : <code className="code">{children}</code>;
}
