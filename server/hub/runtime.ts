import { loadConfig, type HubConfig } from "../config";
import { hubCapabilityRegistry, loadEnabledCapabilities } from "../capabilities";
import { openHubDatabase, type OpenedDatabase } from "../db";
import { LeaseholdError } from "../errors";
import { startIntegrator, type RunningIntegrator } from "../ledger/integrate";
import type { LogKey } from "../ledger/log-key";
import { renewHolder, startLimitSweep } from "../limits";
import { loadHubKeys, pinHubIdentity, type HubKeys } from "./identity";
import { startHousekeeping } from "./housekeeping";
import { startJobServices } from "../jobs/service";

/** Everything one hub process holds open. */
export interface HubRuntime {
  readonly config: HubConfig;
  readonly database: OpenedDatabase;
  /** The audit log: this process's signing key and its background integrator. */
  readonly ledger: { key: LogKey; integrator: RunningIntegrator };
  /** The hub's two private keys, the same in every replica (server/hub/identity.ts). */
  readonly keys: HubKeys;
  /** Set when the process is stopping: readiness answers 503 and new MCP calls are refused. */
  readonly lifecycle: { draining: boolean };
  readonly startedAt: Date;
  close(): Promise<void>;
}

interface RuntimeHolder {
  runtime?: HubRuntime;
  starting?: Promise<HubRuntime>;
}

/**
 * One runtime per process, on globalThis: `leasehold start` (tsx-loaded) and
 * the Next.js route bundles (their own module copies) must see the same open
 * database, and a second PGlite on the same directory would be refused.
 */
const HOLDER_KEY = Symbol.for("leasehold.hub.runtime");

function holder(): RuntimeHolder {
  const g = globalThis as unknown as Record<symbol, RuntimeHolder | undefined>;
  let h = g[HOLDER_KEY];
  if (!h) {
    h = {};
    g[HOLDER_KEY] = h;
  }
  return h;
}

export async function createHubRuntime(config: HubConfig, purpose = "leasehold start"): Promise<HubRuntime> {
  const database = await openHubDatabase(config, { migrate: true, purpose });
  let keys: HubKeys;
  try {
    keys = loadHubKeys(config);
    // Before anything runs: a replica with keys of its own would sign jobs every guest refuses.
    await pinHubIdentity(database.handle.db, keys);
  } catch (error) {
    await database.close();
    throw error;
  }
  // Opt-in capabilities an admin enabled (server/capabilities/enablement.ts).
  try {
    for (const note of await loadEnabledCapabilities(database.handle.db, hubCapabilityRegistry())) console.error(`leasehold: warning: ${note}`);
  } catch (error) {
    await database.close();
    throw error;
  }
  const key: LogKey = keys.log;
  // One integrator among the hub processes on one PostgreSQL database (server/ledger/election.ts).
  const integrator = startIntegrator(database.handle.db, key, {
    electOn: database.handle,
    onError: (error) => console.error(`leasehold: ledger integration failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`),
  });
  const housekeeping = startHousekeeping(database.handle.db, {
    onError: (error) => console.error(`leasehold: housekeeping failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`),
  });
  // Lost heartbeats → unknown, unclaimed jobs → HOST_UNAVAILABLE (server/jobs).
  const jobServices = startJobServices(database.handle.db, {
    windows: config.jobs,
    retentionMs: config.output.retentionMs,
    onError: (error) => console.error(`leasehold: job sweep failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`),
  });
  // Registered before the first request: a holder the sweep does not know counts as dead.
  try {
    await renewHolder(database.handle.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  // Renews this process as a holder of in-flight places and prunes spent limit rows (server/limits).
  const limitSweep = startLimitSweep(database.handle.db, (error) =>
    console.error(`leasehold: limit sweep failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`),
  );
  const runtime: HubRuntime = {
    config,
    database,
    ledger: { key, integrator },
    keys,
    lifecycle: { draining: false },
    startedAt: new Date(),
    async close() {
      const h = holder();
      if (h.runtime === runtime) h.runtime = undefined;
      await limitSweep.stop();
      await jobServices.stop();
      await housekeeping.stop();
      await integrator.stop();
      await database.close();
    },
  };
  return runtime;
}

export function installHubRuntime(runtime: HubRuntime): void {
  const h = holder();
  if (h.runtime && h.runtime !== runtime) throw new LeaseholdError("INTERNAL", "a hub runtime is already installed in this process");
  h.runtime = runtime;
}

/**
 * The process's runtime. Under `leasehold start` it is installed before the
 * first request; under a bare `next dev` it is created on first use from the
 * same environment variables.
 */
export async function getHubRuntime(): Promise<HubRuntime> {
  const h = holder();
  if (h.runtime) return h.runtime;
  if (!h.starting) {
    h.starting = (async () => {
      const parsed = loadConfig(process.env);
      if (!parsed.ok) throw new LeaseholdError("CONFIG_INVALID", parsed.message, { tier: "config" });
      const runtime = await createHubRuntime(parsed.config, "next (lazy start)");
      h.runtime = runtime;
      return runtime;
    })().finally(() => {
      h.starting = undefined;
    });
  }
  return h.starting;
}
