/**
 * Append and integration counters, exposed on the health page. One set per
 * process, on globalThis, because the CLI-started hub and the Next.js route
 * bundles load separate copies of this module.
 */
export interface LedgerCounters {
  appendsAccepted: number;
  appendsFailed: number;
  /** Appends slower than 250 ms: a sign the database is struggling. */
  appendsSlow: number;
  batchesIntegrated: number;
  integrationFailures: number;
  lastIntegrationError: string | null;
}

const KEY = Symbol.for("leasehold.ledger.counters");

export function ledgerCounters(): LedgerCounters {
  const g = globalThis as unknown as Record<symbol, LedgerCounters | undefined>;
  g[KEY] ??= {
    appendsAccepted: 0,
    appendsFailed: 0,
    appendsSlow: 0,
    batchesIntegrated: 0,
    integrationFailures: 0,
    lastIntegrationError: null,
  };
  return g[KEY];
}
