// The result vocabulary of the worker: facts with an evidence state, checks
// for preflight, and the limitations that make a result partial. Never a
// numeric confidence — a reader gets "observed", "derived" or "hypothesized"
// and the ids the derivation used.

export type FactState = "observed" | "derived" | "hypothesized";

export interface Fact {
  id: string;
  value: unknown;
  state: FactState;
  /** Where in the artifact the bytes came from, or which rule derived it. */
  source: string;
  /** For derived and hypothesized facts: the fact ids they were computed from. */
  from?: string[];
}

export type CheckStatus = "pass" | "fail" | "warn" | "unknown";

export interface Check {
  id: string;
  title: string;
  status: CheckStatus;
  state: FactState;
  detail: string;
  from: string[];
}

export const RESULT_SCHEMA = "leasehold.apk-static.result/1";

/** Collects facts in order and refuses a duplicate id (a bug, not input). */
export class FactSet {
  readonly facts: Fact[] = [];
  private readonly byId = new Map<string, Fact>();

  add(fact: Fact): Fact {
    if (this.byId.has(fact.id)) throw new Error(`duplicate fact id ${fact.id}`);
    this.byId.set(fact.id, fact);
    this.facts.push(fact);
    return fact;
  }

  observed(id: string, value: unknown, source: string): Fact {
    return this.add({ id, value, state: "observed", source });
  }

  derived(id: string, value: unknown, source: string, from: string[]): Fact {
    return this.add({ id, value, state: "derived", source, from });
  }

  hypothesized(id: string, value: unknown, source: string, from: string[]): Fact {
    return this.add({ id, value, state: "hypothesized", source, from });
  }

  get(id: string): Fact | undefined {
    return this.byId.get(id);
  }

  withPrefix(prefix: string): Fact[] {
    return this.facts.filter((f) => f.id.startsWith(prefix));
  }
}

/** Limitations: why a result is partial. Bounded so a hostile archive cannot grow the output. */
export class Limitations {
  private readonly items: string[] = [];
  private dropped = 0;

  constructor(private readonly max = 200) {}

  add(message: string): void {
    if (this.items.includes(message)) return;
    if (this.items.length >= this.max) {
      this.dropped++;
      return;
    }
    this.items.push(message);
  }

  list(): string[] {
    return this.dropped === 0 ? [...this.items] : [...this.items, `${this.dropped} further limitations not listed`];
  }
}
