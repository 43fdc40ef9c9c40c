import { describe, expect, it } from "vitest";
import { dbCounters, postgresDebugCounter } from "./query-counters";

describe("bench database counters", () => {
  it("postgres-js: BEGIN … COMMIT is one transaction on its connection; a statement outside one is its own; a rollback commits nothing", () => {
    const counters = dbCounters();
    const start = { ...counters };
    const seen = postgresDebugCounter();
    seen(1, "begin");
    seen(1, "insert into a values (1)");
    seen(2, "select 1"); // another connection, autocommit: one transaction
    seen(1, "update a set x = 2");
    seen(1, "commit");
    seen(1, "select 2"); // after the commit: autocommit again
    seen(3, "begin");
    seen(3, "insert into a values (3)");
    seen(3, "rollback");
    expect(counters.statements - start.statements).toBe(9);
    expect(counters.transactions - start.transactions).toBe(3);
  });
});
