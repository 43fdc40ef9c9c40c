/**
 * Two hosts on two network stacks: a real hub on a real PostgreSQL
 * server listening only on the root end of a veth pair, its automatically
 * started local guest (host "local"), and a second real guest ("web-2")
 * running inside a network namespace this test made — its only way to the
 * hub is the veth. Jobs must reach the host they name, and the evidence must
 * be signed by that host's key.
 */
import { createPublicKey, randomBytes, sign } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resumeAction, submitAction, type ActionOutcome, type Caller, type PipelineDeps } from "../../server/actions";
import { approve } from "../../server/approvals";
import { openPostgres, type DatabaseHandle } from "../../server/db";
import { evidence, hosts, jobs } from "../../server/db/schema";
import { localGuestPaths } from "../../server/hosts/local-guest";
import { verifyEvidence } from "../../server/trust/evidence";
import { loadHostKey } from "../../agent-guest/daemon/state";
import { HEADER_HOST, HEADER_NONCE, HEADER_PEER, HEADER_SIGNATURE, HEADER_TIMESTAMP, requestSigningString, sha256Hex } from "../../server/hosts";
import { createScratchPostgresDatabase, testPostgresUrl } from "../support/databases";
import { spawnSync } from "node:child_process";
import { childEnv, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { createTestNetns, netnsInode, nodeInNetns, type TestNetns } from "../support/netns";
import { insertAdmin, insertToken } from "../pipeline/support";
import { GUEST_BIN, enrolCode, guestDeps, refusal, startGuest, unmountLeftovers, waitForHost, writeCeiling, type RunningGuest } from "./support";

const NETNS_HOST = "web-2";

/** A one-line script for `node -e` in the namespace: prints "ok <status>" or "failed <code>". */
function fetchScript(url: string): string {
  return `try { const r = await fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(3000) }); console.log("ok " + r.status); } catch (e) { console.log("failed " + (e.cause?.code ?? e.name)); }`;
}

// Needs the suite's PostgreSQL server (`npm test` starts it) and root for the namespace; without either this fails loudly, never skips.
describe("two hosts, the second in its own network namespace [postgres]", () => {
  if (!testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server");
    });
    return;
  }
  let netns: TestNetns | undefined;
  let hub: RunningHub | undefined;
  let drop: (() => Promise<void>) | undefined;
  let handle: DatabaseHandle | undefined;
  let web2: RunningGuest | undefined;
  let db: DatabaseHandle["db"];
  let deps: PipelineDeps;
  let caller: Extract<Caller, { kind: "token" }>;
  let admin: { id: string; username: string };
  let workspaces: Record<string, string>;
  let hostRows: Record<string, { id: string; publicKey: string }>;

  const run = (host: string, command: string) => submitAction(deps, caller, { operation: "run_command", arguments: { host, command }, channel: "mcp" }, { waitMs: 0 });

  beforeAll(async () => {
    const ns = createTestNetns();
    netns = ns;
    const scratch = await createScratchPostgresDatabase();
    drop = scratch.drop;
    const env = { DATABASE_URL: scratch.url, LEASEHOLD_HOST: ns.rootAddress };
    hub = await startHub(env);
    handle = await openPostgres(scratch.url, { max: 8 });
    db = handle.db;
    deps = guestDeps(handle, hub.dataDir);
    caller = await insertToken(db);
    admin = await insertAdmin(db);
    const dir = tempDir("lh-netns-");
    const web2Workspace = path.join(dir, "ws-web-2");
    const ceiling = writeCeiling(dir, web2Workspace);
    web2 = startGuest({ hub: hub.url, stateDir: path.join(dir, "state-web-2"), ceiling, code: await enrolCode(env, NETNS_HOST), insecureHttp: true, wrap: (argv) => ns.wrap(argv) });
    try {
      const [local, remote] = await Promise.all([waitForHost(db, "local"), waitForHost(db, NETNS_HOST)]);
      hostRows = { local, [NETNS_HOST]: remote };
    } catch (error) {
      throw new Error(`${String(error)}\nhub:\n${hub.output()}\n${NETNS_HOST}:\n${web2.output()}`, { cause: error });
    }
    workspaces = { local: localGuestPaths(hub.dataDir).workspace, [NETNS_HOST]: web2Workspace };
    // What a read-only job prints tells which host's workspace it ran in.
    for (const [name, ws] of Object.entries(workspaces)) fs.writeFileSync(path.join(ws, "host-tag.txt"), `${name}\n`, { mode: 0o644 });
  }, 120_000);

  afterAll(async () => {
    try {
      await web2?.kill();
      await hub?.stop();
      await handle?.close();
      await drop?.();
    } finally {
      netns?.remove();
    }
    // Both guests stopped with SIGTERM: each unmounted its own bounded workspace.
    expect(unmountLeftovers(Object.values(workspaces ?? {}))).toEqual([]);
  }, 60_000);

  it("web-2 really is on the other network stack: only the veth reaches the hub, and root's loopback is out of reach", async () => {
    const ns = netns!;
    // The guest process itself, not just a probe, is in the namespace the test made.
    expect(netnsInode(web2!.process.pid!)).toBe(netnsInode(ns.path));
    expect(netnsInode(ns.path)).not.toBe(netnsInode(process.pid));
    // A listener on the root namespace's loopback: reachable from here, not from the namespace.
    const probe = net.createServer((socket) => socket.end("HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n"));
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    try {
      const probeUrl = `http://127.0.0.1:${(probe.address() as net.AddressInfo).port}/`;
      expect((await fetch(probeUrl)).status).toBe(204);
      const fromNs = await nodeInNetns(ns, fetchScript(probeUrl));
      expect(fromNs.stdout.trim()).toBe("failed ECONNREFUSED");
      const hubFromNs = await nodeInNetns(ns, fetchScript(`${hub!.url}/api/health`));
      expect(hubFromNs.stdout.trim()).toBe("ok 200");
    } finally {
      probe.close();
    }
    // From the namespace the hub is another machine: plain HTTP needs --insecure-http (the local guest,
    // for which the veth address is its own, needs no flag).
    const [cmd, ...argv] = ns.wrap([process.execPath, GUEST_BIN, "enrol", "--hub", hub!.url, "--state-dir", path.join(tempDir("lh-netns-plain-"), "state")]);
    const plain = spawnSync(cmd!, argv, { encoding: "utf8", env: childEnv({ LEASEHOLD_ENROL_CODE: "lhe_unused" }) as NodeJS.ProcessEnv });
    expect(plain.status, plain.stderr).toBe(1);
    expect(plain.stderr).toMatch(/refusing plain HTTP to .* unencrypted .*--insecure-http/);
    expect(web2!.output()).toMatch(/warning: plain HTTP to .* allowed by --insecure-http/);
    // The hub listens on the veth address only, so the local guest reached it there too, not over 127.0.0.1.
    expect(hub!.url).toBe(`http://${ns.rootAddress}:${hub!.port}`);
    await expect(fetch(`http://127.0.0.1:${hub!.port}/api/health`)).rejects.toThrow();
    expect(hostRows.local!.publicKey).not.toBe(hostRows[NETNS_HOST]!.publicKey);
    // The hub saw each guest come from its own end of the veth (what `leasehold host list` shows).
    const seenFrom = async (name: string) => ((await db.select().from(hosts).where(eq(hosts.name, name)))[0]?.health as { seen_from?: string } | undefined)?.seen_from;
    expect(await seenFrom(NETNS_HOST)).toBe(ns.nsAddress);
    expect(await seenFrom("local")).toBe(ns.rootAddress);
    // A peer address a client claims is replaced by the one the server saw: web-2's own signed
    // health report, re-sent from here with a spoofed header, is recorded as coming from here.
    const [row] = await db.select().from(hosts).where(eq(hosts.name, NETNS_HOST));
    const stored = row!.health as { report: { tier: string; kernel_features: string[]; workers: unknown[] }; probe: unknown; witness: unknown; accepting_jobs: boolean; guest_version: string };
    const report = { tier: stored.report.tier, kernel_features: stored.report.kernel_features, probe: stored.probe, workers: stored.report.workers, witness: stored.witness, accepting_jobs: stored.accepting_jobs, guest_version: stored.guest_version };
    const bytes = Buffer.from(JSON.stringify(report));
    const timestamp = String(Date.now());
    const nonce = randomBytes(16).toString("hex");
    const message = requestSigningString({ method: "POST", pathAndQuery: "/api/agent/health", timestamp, nonce, bodySha256: sha256Hex(bytes) });
    const spoofed = await fetch(`${hub!.url}/api/agent/health`, {
      method: "POST",
      headers: {
        [HEADER_HOST]: row!.id,
        [HEADER_TIMESTAMP]: timestamp,
        [HEADER_NONCE]: nonce,
        [HEADER_SIGNATURE]: sign(null, Buffer.from(message), loadHostKey(web2!.stateDir)).toString("base64"),
        [HEADER_PEER]: "203.0.113.9",
        "content-type": "application/json",
      },
      body: bytes,
    });
    expect(spoofed.status, await spoofed.clone().text()).toBe(200);
    expect(await seenFrom(NETNS_HOST)).toBe(ns.rootAddress);
  }, 30_000);

  it("read-only jobs interleaved across both hosts each run on the host they name, with evidence only that host's key verifies", async () => {
    const rxBefore = netns!.rootRxBytes();
    const names = ["local", NETNS_HOST, "local", NETNS_HOST, "local", NETNS_HOST];
    const outcomes = await Promise.all(names.map((host, i) => run(host, `cat host-tag.txt; echo job-${i}`)));
    for (const [i, host] of names.entries()) {
      const outcome = outcomes[i]!;
      const other = host === "local" ? NETNS_HOST : "local";
      const intended = hostRows[host]!;
      expect(outcome.status).toBe("completed");
      expect(outcome.decision).toBe("auto_allow");
      expect(outcome.result?.output.stdout).toBe(`${host}\njob-${i}\n`);
      const [job] = await db.select().from(jobs).where(eq(jobs.actionId, outcome.action_id));
      expect(job?.hostId).toBe(intended.id);
      expect(job?.claimedBy).toBe(`host:${intended.id}`);
      const [stored] = await db.select().from(evidence).where(eq(evidence.actionId, outcome.action_id));
      expect(stored?.hostId).toBe(intended.id);
      expect((stored!.envelope as { host_id: string }).host_id).toBe(intended.id);
      const signed = { envelope: stored!.envelope, signature: { alg: "Ed25519" as const, key_id: outcome.result!.evidence.key_id, sig: stored!.signature } };
      expect(verifyEvidence(signed, createPublicKey(intended.publicKey)).ok).toBe(true);
      expect(verifyEvidence(signed, createPublicKey(hostRows[other]!.publicKey)).ok).toBe(false);
    }
    // web-2's claims and results crossed the veth (the local guest's never do: the hub's address is local to it).
    expect(netns!.rootRxBytes() - rxBefore).toBeGreaterThan(4096);
  }, 60_000);

  it("an approved mutating job changes only the named host's workspace", async () => {
    const touch = async (host: string, file: string): Promise<ActionOutcome> => {
      const held = await refusal(run(host, `touch ${file}`));
      expect(held.code).toBe("APPROVAL_PENDING");
      const details = held.details as { action_id: string; approval_id: string };
      await approve(db, details.approval_id, admin);
      return resumeAction(deps, caller, details.action_id, { waitMs: 10_000 });
    };
    const [web, local] = await Promise.all([touch(NETNS_HOST, "web-2-was-here"), touch("local", "local-was-here")]);
    expect(web.status).toBe("completed");
    expect(local.status).toBe("completed");
    expect(fs.existsSync(path.join(workspaces[NETNS_HOST]!, "web-2-was-here"))).toBe(true);
    expect(fs.existsSync(path.join(workspaces.local!, "web-2-was-here"))).toBe(false);
    expect(fs.existsSync(path.join(workspaces.local!, "local-was-here"))).toBe(true);
    expect(fs.existsSync(path.join(workspaces[NETNS_HOST]!, "local-was-here"))).toBe(false);
    const [row] = await db.select({ hostId: jobs.hostId }).from(jobs).where(eq(jobs.actionId, web.action_id));
    expect(row?.hostId).toBe(hostRows[NETNS_HOST]!.id);
    const [host] = await db.select({ name: hosts.name }).from(hosts).where(eq(hosts.id, row!.hostId));
    expect(host?.name).toBe(NETNS_HOST);
  }, 40_000);
});
