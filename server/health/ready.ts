import { readMigrationStatus } from "../db";
import type { HubRuntime } from "../hub/runtime";
import { checkHubIdentity } from "../hub/identity";
import { logLine } from "../text";

/**
 * GET /api/ready: whether a load balancer should send this process traffic
 * (docs/deploy.md#readiness). 503 while it cannot serve correctly, in this
 * order: it is draining after SIGTERM; the database does not answer within
 * READY_DB_TIMEOUT_MS; the database lacks migrations this process needs;
 * its keys are not the hub's pinned ones. 200 otherwise. `/api/health`
 * stays the liveness view and does not change with these.
 *
 * Public, like the health probe's public view: the reason is a code, the
 * detail (paths, key ids) goes to the process's log, once per change.
 */
export const READY_DB_TIMEOUT_MS = 2_000;

export type ReadyReason = "draining" | "database_unavailable" | "migrations_behind" | "key_mismatch";

export interface Readiness {
  ready: boolean;
  reason?: ReadyReason;
  migrations?: { applied: number; known: number };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

let lastLogged = "";
function logChange(line: string): void {
  if (line === lastLogged) return;
  lastLogged = line;
  if (line !== "") console.error(logLine(`leasehold: not ready: ${line}`));
}

export async function readReadiness(runtime: HubRuntime): Promise<Readiness> {
  if (runtime.lifecycle.draining) {
    logChange("draining after a stop signal");
    return { ready: false, reason: "draining" };
  }
  const handle = runtime.database.handle;
  let migrations: { applied: number; known: number };
  let identity: Awaited<ReturnType<typeof checkHubIdentity>>;
  try {
    [migrations, identity] = await withTimeout(Promise.all([readMigrationStatus(handle), checkHubIdentity(handle.db, runtime.keys)]), READY_DB_TIMEOUT_MS);
  } catch (error) {
    logChange(`database unavailable: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    return { ready: false, reason: "database_unavailable" };
  }
  if (migrations.applied < migrations.known) {
    logChange(`the database has ${migrations.applied} of the ${migrations.known} migrations this process needs; run \`leasehold migrate\``);
    return { ready: false, reason: "migrations_behind", migrations };
  }
  if (!identity.ok) {
    logChange(identity.reason);
    return { ready: false, reason: "key_mismatch", migrations };
  }
  logChange("");
  return { ready: true, migrations };
}

export async function serveReady(runtime: HubRuntime): Promise<Response> {
  const readiness = await readReadiness(runtime);
  return Response.json(readiness, { status: readiness.ready ? 200 : 503, headers: { "cache-control": "no-store" } });
}
