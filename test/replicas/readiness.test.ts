/**
 * test-group: serial — three hubs and HAProxy with timed readiness checks; a second file beside it on 2 cores stretches the checks it measures.
 * HAProxy's readiness check (`/api/ready`, docs/deploy.md#readiness) takes
 * a replica that cannot serve correctly out of rotation and puts it back
 * once fixed, with three real hub processes on one PostgreSQL:
 *
 * - a replica whose route to the database is cut (its DATABASE_URL goes
 *   through a forwarder of the test's own on 127.0.0.1, which the test cuts
 *   and restores) is out within two checks while the others keep serving,
 *   and back once the route is;
 * - a replica whose keys are not the hub's pinned ones (the pin changed
 *   under running processes) is out within two checks, and back once its
 *   keys match again.
 */
import fs from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateJobKey } from "../../server/dispatch/job-key";
import { loadOrCreateLogKey } from "../../server/ledger/log-key";
import { waitFor } from "../guest/support";
import { CHECK_FALL, CHECK_INTERVAL_MS, startCluster, type Cluster } from "../support/cluster";
import { startHub, tempDir } from "../support/hub-process";
import { startTcpForward, type TcpForward } from "../support/tcp-forward";

/** Out within two failed checks: the first at most one interval after the change, plus the check's own time. */
const OUT_WITHIN_MS = (CHECK_FALL + 1) * CHECK_INTERVAL_MS + 1_000;
const ROUTED = 2;

let cluster: Cluster;
let forward: TcpForward;
let sql: postgres.Sql;

async function states(): Promise<Record<string, string>> {
  return cluster.serverStates();
}

/** Waits until every named server is in the wanted state (UP, or DOWN in any of its forms); returns the time it took. */
async function until(wanted: Record<string, "UP" | "DOWN">, what: string, timeoutMs = 15_000): Promise<number> {
  const began = Date.now();
  await waitFor(what, async () => {
    const now = await states();
    return Object.entries(wanted).every(([name, state]) => (state === "UP" ? now[name] === "UP" : now[name]?.startsWith("DOWN") === true)) || undefined;
  }, timeoutMs, 20);
  return Date.now() - began;
}

async function status(url: string): Promise<number> {
  const res = await fetch(`${url}/api/health`);
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  // The forwarder must exist before the cluster (the replica's DATABASE_URL names its port); its target is set once the database is.
  let target: { host: string; port: number } | undefined;
  forward = await startTcpForward({
    get host() {
      return target?.host ?? "127.0.0.1";
    },
    get port() {
      return target?.port ?? 0;
    },
  });
  cluster = await startCluster({
    replicas: 3,
    replicaEnv: (index, databaseUrl) => {
      if (index !== ROUTED) return {};
      const url = new URL(databaseUrl);
      target = { host: url.hostname, port: Number(url.port) };
      url.port = String(forward.port);
      return { DATABASE_URL: url.toString() };
    },
  });
  sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => undefined });
}, 240_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await cluster?.stop();
  await forward?.close();
}, 60_000);

describe("HAProxy's readiness check with replicas that cannot serve", () => {
  it(`a replica whose database is unreachable is out within ${CHECK_FALL} checks while the balancer keeps answering, and back once its route is`, async () => {
    expect(forward.carried(), "the routed replica's database connections go through the forwarder").toBeGreaterThan(0);
    const name = `hub${ROUTED}`;
    await until({ hub0: "UP", hub1: "UP", [name]: "UP" }, "every replica UP");
    await forward.cut();
    const outMs = await until({ [name]: "DOWN" }, `${name} DOWN after its database route is cut`);
    console.info(`readiness: a replica with its database unreachable was out ${outMs} ms after the cut (checks every ${CHECK_INTERVAL_MS} ms, fall ${CHECK_FALL})`);
    expect(outMs).toBeLessThanOrEqual(OUT_WITHIN_MS);
    const ready = await fetch(`${cluster.hubs[ROUTED]!.url}/api/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, reason: "database_unavailable" });
    expect((await states()).hub0).toBe("UP");
    for (let i = 0; i < 6; i++) expect(await status(cluster.url)).toBe(200);
    await forward.restore();
    const backMs = await until({ [name]: "UP" }, `${name} UP once the route is back`, 30_000);
    console.info(`readiness: back in rotation ${backMs} ms after the route was restored`);
  }, 90_000);

  it(`a replica whose keys are not the pinned ones is out within ${CHECK_FALL} checks, and back once they match`, async () => {
    await until({ hub0: "UP", hub1: "UP", hub2: "UP" }, "every replica UP");
    const [pinned] = await sql<{ job_key_id: string; job_public_key: string; log_verifier: string }[]>`select job_key_id, job_public_key, log_verifier from hub_identity where id = 1`;
    expect(pinned).toBeDefined();
    // A second set of keys, as a replica started with the wrong key directory holds.
    const otherDir = tempDir("lh-other-keys-");
    fs.chmodSync(otherDir, 0o700);
    const job = loadOrCreateJobKey(otherDir);
    const log = loadOrCreateLogKey(otherDir, cluster.url);
    const pin = (p: { job_key_id: string; job_public_key: string; log_verifier: string }) =>
      sql`update hub_identity set job_key_id = ${p.job_key_id}, job_public_key = ${p.job_public_key}, log_verifier = ${p.log_verifier} where id = 1`;

    // hub1 restarts holding the other keys while they are the pinned ones: hub0 and hub2, holding the first, no longer match.
    const old = cluster.hubs[1]!;
    await old.stop("SIGKILL");
    const changed = Date.now();
    await pin({ job_key_id: job.keyId, job_public_key: job.publicKeyPem, log_verifier: log.verifier });
    const othersOutMs = await until({ hub0: "DOWN", hub2: "DOWN" }, "hub0 and hub2 DOWN once the pin is not their keys");
    expect(Date.now() - changed).toBeLessThanOrEqual(OUT_WITHIN_MS);
    const ready = await fetch(`${cluster.hubs[0]!.url}/api/ready`);
    expect(await ready.json()).toMatchObject({ ready: false, reason: "key_mismatch" });
    cluster.hubs[1] = await startHub(cluster.hubEnv({ LEASEHOLD_PORT: String(old.port), LEASEHOLD_DATA_DIR: old.dataDir, LEASEHOLD_KEY_DIR: otherDir }));
    await until({ hub1: "UP" }, "hub1 UP with the keys now pinned");

    // The pin back to the hub's keys: hub0 and hub2 return, hub1 (the other keys) is out.
    const restored = Date.now();
    await pin(pinned!);
    const hub1OutMs = await until({ hub1: "DOWN" }, "hub1 DOWN once its keys are not the pinned ones");
    expect(Date.now() - restored).toBeLessThanOrEqual(OUT_WITHIN_MS);
    await until({ hub0: "UP", hub2: "UP" }, "hub0 and hub2 UP once their keys are pinned again");
    console.info(`readiness: key mismatch took replicas out ${othersOutMs} ms and ${hub1OutMs} ms after the pin changed (checks every ${CHECK_INTERVAL_MS} ms, fall ${CHECK_FALL})`);
    const mismatched = await fetch(`${cluster.hubs[1]!.url}/api/ready`);
    expect(await mismatched.json()).toMatchObject({ ready: false, reason: "key_mismatch" });
    for (let i = 0; i < 6; i++) expect(await status(cluster.url)).toBe(200);

    // Fixed: hub1 restarted with the shared key directory returns.
    await cluster.hubs[1]!.stop("SIGTERM");
    cluster.hubs[1] = await startHub(cluster.hubEnv({ LEASEHOLD_PORT: String(old.port), LEASEHOLD_DATA_DIR: old.dataDir }));
    await until({ hub0: "UP", hub1: "UP", hub2: "UP" }, "hub1 UP with the shared keys", 30_000);
    fs.rmSync(otherDir, { recursive: true, force: true });
  }, 150_000);
});
