/**
 * The first real end-to-end run: a real hub (`leasehold start` on a real
 * PostgreSQL server, with its automatically enrolled local guest), two more
 * real guest processes enrolled with one-time codes, the real sandbox, and
 * the pipeline's `submitAction` — the path an MCP call takes.
 */
import { createPublicKey } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resumeAction, submitAction, type ActionOutcome, type ActionProgress, type Caller, type PipelineDeps } from "../../server/actions";
import { approve, deny } from "../../server/approvals";
import { openPostgres, type DatabaseHandle } from "../../server/db";
import { actions, evidence, hostEnrolmentCodes, hosts, jobs, ledgerCosignatures, ledgerEntries } from "../../server/db/schema";
import { loadOrCreateJobKey } from "../../server/dispatch";
import { readJobOutput } from "../../server/jobs";
import { type LeaseholdError } from "../../server/errors";
import { verifyReceipt } from "../../server/ledger/receipt";
import { verifyEvidence } from "../../server/trust/evidence";
import { bpfStatus } from "../../native/index";
import { createScratchPostgresDatabase, testPostgresUrl } from "../support/databases";
import { fullHealth, runProcess, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { insertAdmin, insertToken, entriesOf } from "../pipeline/support";
import { GUEST_BIN, actionRow, enrolCode, guestDeps, queueRawJob, refusal, startGuest, unmountLeftovers, waitFor, waitForHost, writeCeiling, type RunningGuest } from "./support";

/**
 * The claim window at 6 s instead of the 10 s default: the floor of the
 * hub's offline test (server/jobs/delivery.ts), so a host is still offline
 * only after 6 s without a long-poll. The cases that outlast the window (a
 * queued job waiting for a slot, a dead guest's host answering offline)
 * wait that long and no longer.
 */
const CLAIM_WAIT_S = 6;
const HUB_SETTINGS = { LEASEHOLD_JOB_CLAIM_WAIT_S: String(CLAIM_WAIT_S) };

// Needs the suite's PostgreSQL server (`npm test` starts it); without it this fails loudly, never skips.
describe("guest agent end to end [postgres]", () => {
  if (!testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server");
    });
    return;
  }
  let hub: RunningHub;
  let drop: () => Promise<void>;
  let handle: DatabaseHandle;
  let deps: PipelineDeps;
  let caller: Extract<Caller, { kind: "token" }>;
  let admin: { id: string; username: string };
  let env: Record<string, string | undefined>;
  const guests: RunningGuest[] = [];
  let tight: RunningGuest;
  let second: RunningGuest;
  let secondWorkspace: string;
  let doomedWorkspace = "";
  let third: RunningGuest;
  let guestDir: string;
  let logKey: string;

  const run = (host: string, command: string, waitMs = 0) => submitAction(deps, caller, { operation: "run_command", arguments: { host, command }, channel: "mcp" }, { waitMs });

  beforeAll(async () => {
    const scratch = await createScratchPostgresDatabase();
    drop = scratch.drop;
    env = { DATABASE_URL: scratch.url };
    hub = await startHub({ ...env, ...HUB_SETTINGS });
    handle = await openPostgres(scratch.url, { max: 8 });
    deps = guestDeps(handle, hub.dataDir);
    caller = await insertToken(handle.db);
    admin = await insertAdmin(handle.db);
    logKey = (await (await fetch(`${hub.url}/api/ledger/key`)).text()).trim();
    const dir = tempDir("lh-guest-");
    // "tight": a ceiling below the shell capability's 512 MiB, and an egress list (which tier C cannot enforce).
    const tightCeiling = writeCeiling(path.join(dir), path.join(dir, "ws-tight"), { memory_bytes: 256 << 20, egress: ["10.0.0.0/8:443"] });
    fs.mkdirSync(path.join(dir, "second"));
    secondWorkspace = path.join(dir, "second", "ws");
    const secondCeiling = writeCeiling(path.join(dir, "second"), secondWorkspace);
    tight = startGuest({ hub: hub.url, stateDir: path.join(dir, "state-tight"), ceiling: tightCeiling, code: await enrolCode(env, "tight") });
    second = startGuest({ hub: hub.url, stateDir: path.join(dir, "state-second"), ceiling: secondCeiling, code: await enrolCode(env, "second") });
    guestDir = dir;
    fs.mkdirSync(path.join(dir, "third"));
    third = startGuest({ hub: hub.url, stateDir: path.join(dir, "state-third"), ceiling: writeCeiling(path.join(dir, "third"), path.join(dir, "third", "ws")), code: await enrolCode(env, "third") });
    guests.push(tight, second, third);
    try {
      await Promise.all([waitForHost(handle.db, "local"), waitForHost(handle.db, "tight"), waitForHost(handle.db, "second"), waitForHost(handle.db, "third")]);
    } catch (error) {
      throw new Error(`${String(error)}\nhub:\n${hub.output()}\ntight:\n${tight.output()}\nsecond:\n${second.output()}`, { cause: error });
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(guests.map((g) => g.kill()));
    await hub?.stop();
    await handle?.close();
    await drop?.();
    // Only "doomed" was killed with SIGKILL (mid-job); every other guest unmounted its own workspace.
    const left = unmountLeftovers([guestDir, hub?.dataDir].filter((d): d is string => d !== undefined));
    expect(left.filter((m) => m !== doomedWorkspace)).toEqual([]);
  }, 60_000);

  it("enrolment: host key 0600 in a 0700 state dir; only the code's hash stored; a used or unknown code is refused", async () => {
    const stat = fs.statSync(path.join(tight.stateDir, "host.key"));
    expect(stat.mode & 0o777).toBe(0o600);
    expect(fs.statSync(tight.stateDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(tight.stateDir, "witness.key")).mode & 0o777).toBe(0o600);
    const codes = await handle.db.select().from(hostEnrolmentCodes);
    expect(codes.every((c) => /^[0-9a-f]{64}$/.test(c.codeHash) && c.usedAt !== null)).toBe(true);
    const code = await enrolCode(env, "again");
    const dir = tempDir("lh-enrol-");
    const ok = await spawnGuestEnrol(hub.url, code, path.join(dir, "a"));
    expect(ok.code).toBe(0);
    const reused = await spawnGuestEnrol(hub.url, code, path.join(dir, "b"));
    expect(reused.code).not.toBe(0);
    expect(reused.stderr).toMatch(/unknown, used or expired code/);
    const sealed = (await entriesOfType(handle, "host/1")).length;
    expect(sealed).toBeGreaterThanOrEqual(4); // local, tight, second, again
  }, 60_000);

  it("a read-only command is auto-allowed and runs: scrubbed output, evidence that verifies with the host key, a receipt that verifies", async () => {
    // A token of its own: the shared caller may already hold a lease on "local" from another case (any order),
    // which this action would reuse without a lease/1 entry of its own.
    const own = await insertToken(handle.db);
    const outcome = await submitAction(deps, own, { operation: "run_command", arguments: { host: "local", command: "echo hello-from-the-sandbox; cat /proc/self/uid_map" }, channel: "mcp" }, { waitMs: 0 });
    expect(outcome.status).toBe("completed");
    expect(outcome.decision).toBe("auto_allow");
    const result = outcome.result!;
    expect(result.output.stdout).toContain("hello-from-the-sandbox");
    expect(result.exit?.code).toBe(0);
    // The host's tier is this machine's BPF verdict; a network-"none" lease is not put under the programs.
    expect(result.evidence.tier).toBe(bpfStatus().tier);
    expect(result.evidence.limitations.join("\n")).toMatch(/no BPF program enforced this lease/);
    // The envelope verifies with the host key recorded at enrolment.
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "local"));
    const [stored] = await handle.db.select().from(evidence).where(eq(evidence.actionId, outcome.action_id));
    const verified = verifyEvidence({ envelope: stored!.envelope, signature: { alg: "Ed25519", key_id: result.evidence.key_id, sig: stored!.signature } }, createPublicKey(host!.publicKey));
    expect(verified.ok).toBe(true);
    // The receipt proves the evidence/1 entry is in the log the hub's key signs.
    expect(result.receipt).not.toBeNull();
    const [entry] = await handle.db.select({ body: ledgerEntries.body }).from(ledgerEntries).where(eq(ledgerEntries.id, BigInt(result.ledger_entry_id)));
    const check = verifyReceipt(entry!.body, { leaf_index: result.receipt!.leaf_index, inclusion_proof: result.receipt!.inclusion_proof, checkpoint: result.receipt!.checkpoint }, logKey);
    expect(check.ok).toBe(true);
    const types = (await entriesOf(handle.db, outcome.action_id)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["decision/1", "lease/1", "dispatch/1", "evidence/1"]));
  }, 30_000);

  it("jobs go to the host they name: the second guest runs in its own workspace", async () => {
    const outcome = await run("second", "cat /proc/loadavg >/dev/null; echo second-host");
    expect(outcome.result?.output.stdout).toBe("second-host\n");
    const [job] = await handle.db.select().from(jobs).where(eq(jobs.actionId, outcome.action_id));
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "second"));
    expect(job?.hostId).toBe(host?.id);
    expect(job?.claimedBy).toBe(`host:${host?.id}`);
  }, 30_000);

  it("fair shares through a real guest: one token's five long sleeps do not take all 4 slots; another token's id runs while they are still running", async () => {
    // Longer than the claim window, so the two that wait for a slot outlast it.
    const SLEEP_S = CLAIM_WAIT_S + 3;
    const greedy = await insertToken(handle.db);
    // Each call waits for its result, so the five run side by side.
    const sleeps = Array.from({ length: 5 }, (_, i) =>
      submitAction(deps, greedy, { operation: "run_command", arguments: { host: "third", command: `sleep ${SLEEP_S} # ${i}` }, channel: "mcp" }, { waitMs: 60_000 }),
    );
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "third"));
    const sleepJobs = async () =>
      (await handle.db.select({ state: jobs.state, command: actions.prepared }).from(jobs).innerJoin(actions, eq(actions.id, jobs.actionId)).where(eq(jobs.hostId, host!.id))).filter((j) =>
        JSON.stringify(j.command).includes(`sleep ${SLEEP_S}`),
      );
    await waitFor("the greedy token's five jobs queued and its share claimed", async () => {
      const all = await sleepJobs();
      return all.length === 5 && all.filter((j) => j.state === "claimed").length === 3 ? all : undefined;
    });
    const id = await run("third", "id", 60_000);
    expect(id.status).toBe("completed");
    expect(id.result?.output.stdout).toMatch(/^uid=/);
    // It ran while the sleeps still held their slots: none has finished, and two still wait queued.
    const states = (await sleepJobs()).map((j) => j.state);
    expect(states.filter((st) => st === "claimed")).toHaveLength(3);
    expect(states.filter((st) => st === "queued")).toHaveLength(2);
    // The queued sleeps wait for a slot (past the claim window) instead of failing HOST_UNAVAILABLE.
    const outcomes = await Promise.all(sleeps);
    expect(outcomes.map((o) => o.status)).toEqual(["completed", "completed", "completed", "completed", "completed"]);
  }, 90_000);

  it("output progress crosses processes: the guest's heartbeat reaches the hub, and this waiter hears it through NOTIFY", async () => {
    const seen: ActionProgress[] = [];
    const command = "for i in 1 2 3; do printf '%0100d\\n' $i; sleep 1; done";
    const outcome = await submitAction(deps, caller, { operation: "run_command", arguments: { host: "second", command }, channel: "mcp" }, { waitMs: 0, onProgress: (p) => seen.push(p) });
    expect(outcome.status).toBe("completed");
    expect(outcome.result?.output.stdout.length).toBe(3 * 101);
    const running = seen.filter((p) => p.stage === "running");
    expect(running.length, JSON.stringify(seen)).toBeGreaterThanOrEqual(1);
    expect(running[0]).toMatchObject({ host: "second", stderr_bytes: 0 });
    expect(running.every((p) => p.stdout_bytes > 0 && p.stdout_bytes % 101 === 0)).toBe(true);
  }, 30_000);

  it("a mutating command is held, approved through the pipeline, then runs; a denied one never runs", async () => {
    const held = await refusal(run("second", "touch approved.txt"));
    expect(held.code).toBe("APPROVAL_PENDING");
    const details = held.details as { action_id: string; approval_id: string };
    await approve(handle.db, details.approval_id, { id: admin.id, username: admin.username });
    const done: ActionOutcome = await resumeAction(deps, caller, details.action_id, { waitMs: 5_000 });
    expect(done.status).toBe("completed");
    expect(done.decision).toBe("approved");
    expect(fs.existsSync(path.join(secondWorkspace, "approved.txt"))).toBe(true);

    const held2 = await refusal(run("second", "touch denied.txt"));
    const d2 = held2.details as { action_id: string; approval_id: string };
    await deny(handle.db, d2.approval_id, { id: admin.id, username: admin.username }, "not today");
    const denied = await refusal(resumeAction(deps, caller, d2.action_id, { waitMs: 5_000 }));
    expect(denied.code).toBe("APPROVAL_DENIED");
    expect(fs.existsSync(path.join(secondWorkspace, "denied.txt"))).toBe(false);
  }, 30_000);

  it("a secret the workload prints arrives redacted, with the count in the evidence", async () => {
    const key = "AKIA" + "IOSFODNN7EXAMPLE";
    const command = `echo ${key}; printf -- '-----BEGIN RSA PRIVATE KEY-----\\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\\n-----END RSA PRIVATE KEY-----\\n'`;
    const outcome = await run("local", command);
    const out = outcome.result!.output.stdout;
    expect(out).not.toContain(key);
    expect(out).not.toContain("MIIBOgIBAAJBAKj34");
    expect(out).toContain("[REDACTED:aws_access_key]");
    expect(out).toContain("[REDACTED:private_key]");
    expect(outcome.result!.evidence.redactions.count).toBeGreaterThanOrEqual(2);
    expect(outcome.result!.evidence.redactions.kinds).toEqual(expect.arrayContaining(["aws_access_key", "private_key"]));
    const sealed = (await entriesOf(handle.db, outcome.action_id)).find((e) => e.type === "evidence/1");
    expect((sealed?.data as { redaction_count: number }).redaction_count).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it("fs_read by a read-only token from an offset three bytes into a token (and across a page boundary) returns markers, never the token's body", async () => {
    const token = "lh" + "_" + "N3vQx8Rk2mWz7TnB4cYp1sLd9fGh3jKa";
    const text = `${"# settings\n".repeat(4)}HUB_TOKEN=${token}\nend\n`;
    fs.writeFileSync(path.join(secondWorkspace, "creds.env"), text);
    const reader = await insertToken(handle.db, { readOnly: true });
    const read = (offset: number, limit: number) =>
      submitAction(deps, reader, { operation: "fs_read", arguments: { host: "second", path: "creds.env", offset, limit }, channel: "mcp" }, { waitMs: 20_000 });
    const at = text.indexOf(token) + 3;
    const inside = await read(at, 64);
    expect(inside.result!.output.stdout).toBe("[REDACTED:leasehold_token]\nend\n");
    expect(inside.result!.evidence.redactions).toEqual({ count: 1, kinds: ["leasehold_token"] });
    const before = await read(text.indexOf(token) - 10, 20);
    expect(before.result!.output.stdout).toBe("HUB_TOKEN=[REDACTED:leasehold_token]");
    expect(`${inside.result!.output.stdout}${before.result!.output.stdout}`).not.toContain(token.slice(3, 9));
  }, 60_000);

  it("a policy beyond the host ceiling is refused on the guest before launch (POLICY_REFUSED naming the field), and sealed", async () => {
    const e = await refusal(run("tight", "echo never-runs"));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.message).toMatch(/memory_bytes/);
    expect((e.details as { field?: string }).field).toBe("memory_bytes");
    const types = (await entriesOf(handle.db, (e.details as { action_id: string }).action_id)).map((x) => x.type);
    expect(types).toContain("evidence/1");
  }, 30_000);

  it("a network attempt from a workload with network none fails", async () => {
    const held = await refusal(
      submitAction(deps, caller, { operation: "run_code", arguments: { host: "local", language: "python3", code: "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3)\nprint('connected')" }, channel: "mcp" }, { waitMs: 0 }),
    );
    const d = held.details as { action_id: string; approval_id: string };
    await approve(handle.db, d.approval_id, { id: admin.id, username: admin.username });
    const done = await resumeAction(deps, caller, d.action_id, { waitMs: 5_000 });
    expect(done.result?.exit?.code).not.toBe(0);
    expect(done.result?.output.stdout).not.toContain("connected");
    // Denied in the kernel: with network "none" and no ports, seccomp's family allow-list refuses AF_INET itself.
    expect(done.result?.output.stderr).toMatch(/Address family not supported/);
  }, 30_000);

  // Probed, not assumed: on tier C an egress policy within the ceiling is refused; on tier A/B it runs under the
  // BPF programs (egress leases never start without them). agent-guest/daemon/runner-egress.test.ts keeps the
  // tier C refusal covered on every machine.
  const tier = bpfStatus().tier;
  it(`an egress policy within the host's ceiling on this tier ${tier} host: ${tier === "C" ? "refused with UNENFORCEABLE" : "runs under the BPF programs, the evidence says so"}`, async () => {
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "tight"));
    const key = loadOrCreateJobKey(hub.dataDir);
    const { actionId } = await queueRawJob(handle.db, key, { id: host!.id, name: "tight" }, { command: "echo hi", network: { mode: "egress", egress: ["10.1.0.0/16:443"] } });
    const row = await waitFor("the job's end", async () => {
      const r = await actionRow(handle.db, actionId);
      return r?.state === "failed" || r?.state === "completed" ? r : undefined;
    });
    if (tier === "C") {
      const completion = (row.result as { completion: { error: { code: string; message: string } } }).completion;
      expect(completion.error.code).toBe("UNENFORCEABLE");
      expect(completion.error.message).toMatch(/tier C/);
      return;
    }
    expect(row.state, JSON.stringify(row.result)).toBe("completed");
    const [stored] = await handle.db.select().from(evidence).where(eq(evidence.actionId, actionId));
    const bpf = (stored!.envelope as { enforcement: { bpf: { tier: string; attached: boolean; object_sha256?: string; denials?: unknown[] } } }).enforcement.bpf;
    expect(bpf).toMatchObject({ tier, attached: true, object_sha256: bpfStatus().object_sha256, denials: [] });
  }, 30_000);

  it("a tampered job (signature no longer covers it), a signed job whose action no longer matches its hash, and a replayed job are refused; nothing runs twice", async () => {
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "second"));
    const key = loadOrCreateJobKey(hub.dataDir);
    const target = { id: host!.id, name: "second" };
    const tampered = await queueRawJob(handle.db, key, target, {
      command: "echo signed",
      mutate: (doc) => {
        ((doc["action"] as { arguments: { command: string } }).arguments).command = "echo tampered >> tampered.txt";
      },
    });
    const t = await waitFor("tampered refusal", async () => {
      const r = await actionRow(handle.db, tampered.actionId);
      return r?.state === "failed" ? r : undefined;
    });
    expect((t.result as { completion: { error: { message: string } } }).completion.error.message).toMatch(/signature does not verify/);
    expect(fs.existsSync(path.join(secondWorkspace, "tampered.txt"))).toBe(false);

    // Signed by the hub's key, but the action was changed after its hash was taken (an approval for one
    // action, a job carrying another): the signature verifies, so only the guest's recomputed hash refuses it.
    const swapped = await queueRawJob(handle.db, key, target, {
      command: "echo approved",
      mutateSigned: (doc) => {
        ((doc["action"] as { arguments: { command: string } }).arguments).command = "echo swapped >> swapped.txt";
      },
    });
    const sw = await waitFor("swapped-action refusal", async () => {
      const r = await actionRow(handle.db, swapped.actionId);
      return r?.state === "failed" ? r : undefined;
    });
    expect((sw.result as { completion: { error: { message: string } } }).completion.error.message).toMatch(/action_hash does not match the prepared action/);
    expect(fs.existsSync(path.join(secondWorkspace, "swapped.txt"))).toBe(false);

    const honest = await queueRawJob(handle.db, key, target, { command: "echo ran >> counter.txt" });
    await waitFor("honest run", async () => (await actionRow(handle.db, honest.actionId))?.state === "completed");
    expect(fs.readFileSync(path.join(secondWorkspace, "counter.txt"), "utf8")).toBe("ran\n");
    // Replay: the same signed job is queued again.
    await handle.db.update(jobs).set({ state: "queued", claimedAt: null, claimedBy: null }).where(eq(jobs.id, honest.jobId));
    await waitFor("replay refused", async () => second.output().includes("replayed job"));
    await waitFor("job settled", async () => {
      const [j] = await handle.db.select().from(jobs).where(eq(jobs.id, honest.jobId));
      return j?.state === "completed";
    });
    expect(fs.readFileSync(path.join(secondWorkspace, "counter.txt"), "utf8")).toBe("ran\n");
    expect((await handle.db.select().from(evidence).where(eq(evidence.jobId, honest.jobId))).length).toBe(1);
  }, 40_000);

  it("an observe job cannot write the workspace even when its command does, not even into a world-writable sub-directory (read-only bind), and its result says its /tmp writes were discarded", async () => {
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "second"));
    const key = loadOrCreateJobKey(hub.dataDir);
    const target = { id: host!.id, name: "second" };
    // What an earlier exclusive job could leave behind: a 0777 directory owned by another uid.
    const open = path.join(secondWorkspace, "left-open");
    fs.mkdirSync(open);
    fs.chownSync(open, 54_321, 54_321);
    fs.chmodSync(open, 0o777);
    const command = "echo x > observe-wrote.txt; echo status=$?; echo y > left-open/observe-wrote.txt; echo sub=$?; echo t > /tmp/scratch; echo tmp=$?";
    const observe = await queueRawJob(handle.db, key, target, { command, leaseMode: "observe" });
    const row = await waitFor("observe job", async () => {
      const r = await actionRow(handle.db, observe.actionId);
      return r?.state === "completed" ? r : undefined;
    });
    expect(fs.existsSync(path.join(secondWorkspace, "observe-wrote.txt"))).toBe(false);
    expect(fs.readdirSync(open)).toEqual([]);
    const output = await readJobOutput(handle.db, observe.jobId);
    expect(output["stdout"]?.toString()).toMatch(/status=[12]\nsub=[12]\ntmp=0\n/);
    expect(output["stderr"]?.toString()).toMatch(/Read-only file system/);
    const completion = (row.result as { completion: { state: string; structured: { sandbox: { lease: string; workspace: string; throwaway_writes: { tmp_files: number } | null; note: string } } } }).completion;
    expect(completion.state).toBe("completed");
    expect(completion.structured.sandbox).toMatchObject({ lease: "observe", workspace: "read-only" });
    expect(completion.structured.sandbox.throwaway_writes?.tmp_files).toBeGreaterThanOrEqual(1);
    expect(completion.structured.sandbox.note).toMatch(/read-only.*discarded when the job ended/);
    // The same command under an exclusive lease writes.
    const exclusive = await queueRawJob(handle.db, key, target, { command: "echo x > exclusive-wrote.txt" });
    await waitFor("exclusive job", async () => (await actionRow(handle.db, exclusive.actionId))?.state === "completed");
    expect(fs.existsSync(path.join(secondWorkspace, "exclusive-wrote.txt"))).toBe(true);
  }, 30_000);

  it("hostile classes through a real guest and sandbox: other socket families, exec from a memfd, setuid bits, host facts, the workspace's host path — each refused or hidden", async () => {
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "second"));
    const key = loadOrCreateJobKey(hub.dataDir);
    const script = [
      "import errno, os, socket, subprocess",
      "def t(name, f):",
      "    try:",
      "        print(name, 'OK', f())",
      "    except OSError as e:",
      "        print(name, errno.errorcode[e.errno])",
      "t('vsock', lambda: socket.socket(40, socket.SOCK_STREAM).fileno() > 0)",
      "t('netlink_uevent', lambda: socket.socket(16, socket.SOCK_DGRAM, 15).fileno() > 0)",
      "t('packet', lambda: socket.socket(17, socket.SOCK_RAW, 0).fileno() > 0)",
      "def memfd_exec():",
      "    fd = os.memfd_create('x', 0)",
      "    os.write(fd, open('/usr/bin/true', 'rb').read())",
      "    return subprocess.run(['/proc/self/fd/%d' % fd], pass_fds=(fd,)).returncode",
      "t('memfd_exec', memfd_exec)",
      "open('suid', 'w').close()",
      "t('chmod_suid', lambda: os.chmod('suid', 0o4755))",
      "t('cmdline_bytes', lambda: len(open('/proc/cmdline').read()))",
      "t('usr_local', lambda: ','.join(sorted(os.listdir('/usr/local'))))",
      "t('work_root', lambda: [l.split()[3] for l in open('/proc/self/mountinfo') if l.split()[4] == '/work'][0])",
    ].join("\n");
    const job = await queueRawJob(handle.db, key, { id: host!.id, name: "second" }, { command: `python3 - <<'EOF'\n${script}\nEOF` });
    await waitFor("hostile job", async () => (await actionRow(handle.db, job.actionId))?.state === "completed", 20_000);
    const output = await readJobOutput(handle.db, job.jobId);
    const out = output["stdout"]?.toString() ?? "";
    expect(out, output["stderr"]?.toString()).toMatch(/^vsock EAFNOSUPPORT$/m);
    expect(out).toMatch(/^netlink_uevent EAFNOSUPPORT$/m);
    expect(out).toMatch(/^packet EAFNOSUPPORT$/m);
    expect(out).toMatch(/^memfd_exec (EACCES|EPERM)$/m);
    expect(out).toMatch(/^chmod_suid EPERM$/m);
    expect(out).toMatch(/^cmdline_bytes OK 0$/m);
    expect(out).toMatch(/^usr_local OK $/m);
    // The workspace is its own file system: the /work mount's root is "/", not a host path.
    expect(out).toMatch(/^work_root OK \/$/m);
    expect(out).not.toContain(secondWorkspace);
    expect((fs.statSync(path.join(secondWorkspace, "suid")).mode & 0o6000)).toBe(0);
  }, 30_000);

  it("the guest witnesses the ledger: it keeps its last cosigned checkpoint and the hub accepts its cosignatures", async () => {
    const state = await waitFor("tight's witness state", async () => {
      const file = path.join(tight.stateDir, "witness.json");
      return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as { size: number; origin: string }) : undefined;
    }, 20_000, 250);
    expect(state.size).toBeGreaterThan(0);
    expect(logKey.startsWith(`${state.origin}+`)).toBe(true);
    const rows = await waitFor("accepted cosignatures", async () => {
      const r = await handle.db.select().from(ledgerCosignatures);
      return r.filter((c) => c.witnessName.includes("/leasehold-guest/")).length >= 3 ? r : undefined;
    }, 20_000, 250);
    // Each guest (local, tight, second) cosigned with its own witness key.
    expect(new Set(rows.map((r) => r.witnessKeyId)).size).toBeGreaterThanOrEqual(3);
    // Stored beside the checkpoints they cosign, never appended as entries (an entry would make a new checkpoint to cosign).
    expect(await entriesOfType(handle, "checkpoint-witness/1")).toHaveLength(0);
  }, 45_000);

  it("hub restarted mid-job: the guest finishes, retries delivery, and the result is stored once", async () => {
    const pending = run("third", "sleep 3; echo survived-the-restart");
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "third"));
    await waitFor("job claimed", async () => {
      const [j] = await handle.db.select().from(jobs).where(and(eq(jobs.hostId, host!.id), eq(jobs.state, "claimed")));
      return j;
    });
    await hub.stop();
    hub = await startHub({ ...env, ...HUB_SETTINGS, LEASEHOLD_PORT: String(hub.port), LEASEHOLD_DATA_DIR: hub.dataDir });
    const outcome = await pending;
    expect(outcome.result?.output.stdout).toBe("survived-the-restart\n");
    expect((await handle.db.select().from(evidence).where(eq(evidence.actionId, outcome.action_id))).length).toBe(1);
    expect((await entriesOf(handle.db, outcome.action_id)).filter((e) => e.type === "evidence/1")).toHaveLength(1);
  }, 60_000);

  it("a failed witness check (the hub cannot prove consistency with what the guest cosigned) is loud on hub health, and the guest stops taking jobs", async () => {
    // A guest of its own to turn against the log, so "third" keeps taking jobs whatever order the cases run in.
    fs.mkdirSync(path.join(guestDir, "crooked"));
    const ceiling = writeCeiling(path.join(guestDir, "crooked"), path.join(guestDir, "crooked", "ws"));
    let crooked = startGuest({ hub: hub.url, stateDir: path.join(guestDir, "state-crooked"), ceiling, code: await enrolCode(env, "crooked") });
    guests.push(crooked);
    await waitForHost(handle.db, "crooked");
    const file = path.join(crooked.stateDir, "witness.json");
    await waitFor("crooked's first cosignature", async () => fs.existsSync(file), 20_000, 250);
    await crooked.kill();
    const state = JSON.parse(fs.readFileSync(file, "utf8")) as { origin: string; size: number; root: string };
    // As if this guest had cosigned a larger tree than the hub now serves: a truncated log.
    fs.writeFileSync(file, JSON.stringify({ ...state, size: state.size + 1_000_000 }), { mode: 0o600 });
    crooked = startGuest({ hub: hub.url, stateDir: crooked.stateDir, ceiling });
    guests.push(crooked);
    const health = await waitFor("degraded health", async () => {
      const h = await fullHealth<{ status: string; hosts: { witness_failures: Array<{ host: string; reason: string }> } }>(hub, env);
      return h.hosts.witness_failures.some((f) => f.host === "crooked") ? h : undefined;
    }, 20_000, 250);
    expect(health.status).toBe("degraded");
    expect(crooked.output()).toMatch(/WITNESS CHECK FAILED/);
    const e = await refusal(run("crooked", "echo should-not-run"));
    expect(e.code).toBe("CAPABILITY_UNAVAILABLE");
  }, 60_000);

  it("guest killed mid-job: the action ends unknown (not success, not retried), sealed; then the offline host answers HOST_UNAVAILABLE", async () => {
    // A guest of its own to kill, so the other cases keep "second" whatever order they run in.
    fs.mkdirSync(path.join(guestDir, "doomed"));
    doomedWorkspace = path.join(guestDir, "doomed", "ws");
    const doomed = startGuest({ hub: hub.url, stateDir: path.join(guestDir, "state-doomed"), ceiling: writeCeiling(path.join(guestDir, "doomed"), doomedWorkspace), code: await enrolCode(env, "doomed") });
    guests.push(doomed);
    await waitForHost(handle.db, "doomed");
    const pending = run("doomed", "sleep 30").then(
      () => null,
      (e: unknown) => e as LeaseholdError,
    );
    const [host] = await handle.db.select().from(hosts).where(eq(hosts.name, "doomed"));
    await waitFor("job claimed", async () => {
      const [j] = await handle.db.select().from(jobs).where(and(eq(jobs.hostId, host!.id), eq(jobs.state, "claimed")));
      return j;
    });
    // Mid-job: the workload itself runs under the guest when the guest dies.
    await waitFor("the job's sleep 30 running under the doomed guest", async () => descendants(doomed.process.pid!).some((pid) => cmdline(pid) === "sleep 30"), 20_000, 50);
    await doomed.kill("SIGKILL");
    const e = await pending;
    expect(e?.code).toBe("HOST_UNAVAILABLE");
    const actionId = (e?.details as { action_id: string }).action_id;
    expect((await actionRow(handle.db, actionId))?.state).toBe("unknown");
    const types = (await entriesOf(handle.db, actionId)).map((x) => x.type);
    expect(types).toContain("job/1");
    expect(types).not.toContain("evidence/1");

    const started = Date.now();
    const offline = await refusal(run("doomed", "echo nobody-home"));
    expect(offline.code).toBe("HOST_UNAVAILABLE");
    expect(offline.retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 60_000);
});

/** The command line of a process, its arguments joined by spaces ("" once it is gone). */
function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return "";
  }
}

/** Every live process below `root` (children, their children, ...), from the parent pid in /proc/<pid>/stat. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) may hold spaces and parentheses: the parent pid is the second field after its last ")".
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone since the listing
    }
  }
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parentOf) {
      if (below.has(parent) && !below.has(pid)) {
        below.add(pid);
        grew = true;
      }
    }
  }
  below.delete(root);
  return [...below];
}

async function entriesOfType(handle: DatabaseHandle, type: string) {
  const { allEntries } = await import("../pipeline/support");
  return (await allEntries(handle.db)).filter((e) => e.type === type);
}

function spawnGuestEnrol(hub: string, code: string, stateDir: string) {
  return runProcess(process.execPath, [GUEST_BIN, "enrol", "--hub", hub, "--state-dir", stateDir], { label: "leasehold-guest enrol", env: { ...(process.env as Record<string, string>), LEASEHOLD_ENROL_CODE: code } });
}
