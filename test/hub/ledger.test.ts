/**
 * The ledger through the hub, as users reach it: the CLI (`ledger key`,
 * `export`, `ledger checkpoint`, `verify` — including a tampered and a
 * truncated export; witnesses are registered, for set-up, with the CLI's
 * command run inside the hub through its control socket), the
 * public HTTP routes, a witness submitting a cosignature over HTTP, and the
 * hub's own local guest witnessing an idle log without making it grow.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WITNESS_INTERVAL_MS } from "../../agent-guest/daemon/witness";
import { decodeBase64Strict } from "../../server/trust/ledger/base64";
import { generateSignerKey, SIGNATURE_TYPE } from "../../server/trust/ledger/note";
import { initialWitnessState, witnessCosign } from "../../server/trust/ledger/witness";
import { fullHealth, localGuestTierRecorded, runCli, runInRunningHub, startHub, tempDir, type RunningHub } from "../support/hub-process";

/** The idle window: four of the guest's witness rounds, each of which would append if cosigning grew the log. */
const IDLE_WINDOW_MS = 4 * WITNESS_INTERVAL_MS;

let hub: RunningHub;
beforeAll(async () => {
  hub = await startHub();
  // Start-up goes on after the hub answers: its first admin and token, the local guest's enrolment and
  // witness key are sealed entries, and so is the tier of the guest's first health report, which comes
  // after its sandbox self-test (seconds later on a loaded machine, possibly after its first cosignature).
  // Once the tier is recorded and the guest cosigns, they are all in; a case that needs the log to stand
  // still between two reads is not overtaken by them.
  await localGuestTierRecorded(hub);
  await waitForGuestCosignature(1);
}, 120_000);

afterAll(async () => {
  await hub?.stop();
});

async function waitForCheckpoint(): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${hub.url}/api/ledger/checkpoint`);
    if (res.ok) return res.text();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no checkpoint appeared");
}

/** The newest checkpoint once the log has settled (two reads 0.5 s apart agree): what an append just made is integrated. */
async function settledCheckpoint(): Promise<string> {
  let last = await waitForCheckpoint();
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const next = await waitForCheckpoint();
    if (next.split("\n")[1] === last.split("\n")[1]) return next;
    last = next;
  }
  throw new Error("the log did not settle");
}

describe("the ledger through a running hub", () => {
  it("serves its key at the well-known URL and through `leasehold ledger key` (run inside the hub)", async () => {
    const wellKnown = await (await fetch(`${hub.url}/.well-known/leasehold/ledger-key`)).text();
    const cli = await runCli(["ledger", "key"], { LEASEHOLD_DATA_DIR: hub.dataDir });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout.trim()).toBe(wellKnown.trim());
    expect(wellKnown.trim()).toMatch(/^127\.0\.0\.1:\d+\/leasehold\/[0-9a-f]{12}\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/);
  });

  it("witnesses cosign over HTTP; export → verify passes; one changed byte fails and is located", async () => {
    const { witness, note, size, line, logKey } = await registerAndCosign("witness.test/e2e");
    const bad = await fetch(`${hub.url}/api/ledger/cosignature`, { method: "POST", body: "{" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe("INVALID_ARGUMENT");

    const inclusion = await fetch(`${hub.url}/api/ledger/proof/inclusion?index=0`);
    expect(inclusion.status).toBe(200);
    expect((await fetch(`${hub.url}/api/ledger/proof/inclusion?index=abc`)).status).toBe(400);
    expect((await fetch(`${hub.url}/api/ledger/proof/inclusion?index=99999`)).status).toBe(404);

    // Stored beside its checkpoint, not appended: proofs against that checkpoint (and so receipts) carry it.
    const served = (await (await fetch(`${hub.url}/api/ledger/proof/inclusion?index=0&size=${size}`)).json()) as { checkpoint: string };
    expect(served.checkpoint.startsWith(note.slice(0, note.indexOf("\n\n") + 2))).toBe(true);
    expect(served.checkpoint).toContain(`\n${line}\n`);
    const dir = tempDir();
    // Runs inside the hub (control socket), but a relative path is the caller's.
    const out = await runCli(["export", "--out", "log.export"], { LEASEHOLD_DATA_DIR: hub.dataDir }, 60_000, dir);
    expect(out.code, out.stderr).toBe(0);
    const file = path.join(dir, "log.export");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const keyFile = path.join(dir, "log.pub");
    fs.writeFileSync(keyFile, `${logKey}\n`);

    // The local guest may have cosigned the same checkpoint too: its cosignature is unchecked here.
    const good = await runCli(["verify", file, "--key", keyFile, "--witness", witness.verifier]);
    expect(good.code, good.stdout + good.stderr).toBe(0);
    expect(good.stdout).toContain("VERIFIED");
    expect(good.stdout).toMatch(/cosignatures:\s+1 verified/);
    expect(good.stdout).not.toMatch(/witness key not supplied/);

    // Flip one byte inside the first entry's base64 payload.
    const text = fs.readFileSync(file, "utf8");
    const at = text.indexOf('{"entry":"') + 20;
    const flipped = text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    fs.writeFileSync(file, flipped);
    const tampered = await runCli(["verify", file, "--key", keyFile]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/entry 0|line 2/);
    console.log(`leasehold verify on a tampered export:\n${tampered.stdout}`);
  });

  it(`an idle hub whose guest witnesses it does not grow its log: the newest checkpoint is cosigned by the guest and stays the newest (${IDLE_WINDOW_MS / 1000} s)`, async () => {
    // Start from a settled log: every entry appended so far (a late start-up entry on a busy machine)
    // is in a checkpoint the guest cosigned. Otherwise the window would see that checkpoint catch up.
    // Settled means the export and the guest-cosigned checkpoint agree on the size: an entry landing
    // between the two reads (a late start-up step) starts the settling over instead of the window.
    let entriesBefore = await exportedEntries();
    let before = await waitForGuestCosignature(entriesBefore);
    for (let tries = 0; before.size !== entriesBefore; tries += 1) {
      if (tries >= 20) throw new Error(`the log did not settle: export ${entriesBefore} entries, cosigned checkpoint at ${before.size}`);
      entriesBefore = await exportedEntries();
      before = await waitForGuestCosignature(entriesBefore);
    }
    // Nothing happens in this window, by design: what is checked is that the guest's witness rounds add nothing.
    await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
    const after = await checkpointNote();
    const entriesAfter = await exportedEntries();
    console.log(`idle hub: tree size ${before.size} → ${sizeOf(after)} over ${IDLE_WINDOW_MS / 1000} s; exported entries ${entriesBefore} → ${entriesAfter}`);
    expect(sizeOf(after)).toBe(before.size);
    expect(entriesAfter).toBe(entriesBefore);
    // Still the same checkpoint, still carrying the guest's cosignature.
    expect(after.startsWith(bodyOf(before.note))).toBe(true);
    expect(guestLines(after).length).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it("a new checkpoint is cosigned by the guest within seconds of the append that made it", async () => {
    const start = sizeOf(await settledCheckpoint());
    // Any sealed step appends; registering a witness is one a test can make.
    const added = await runInRunningHub(hub.dataDir, ["ledger", "witness", "add", generateSignerKey("witness.test/append", SIGNATURE_TYPE.cosignatureV1).verifier]);
    expect(added.code, added.stderr).toBe(0);
    const appendedAt = Date.now();
    const cosigned = await waitForGuestCosignature(start + 1);
    console.log(`checkpoint at size ${cosigned.size} carried the local guest's cosignature ${((Date.now() - appendedAt) / 1000).toFixed(1)} s after the append`);
    expect(cosigned.size).toBeGreaterThan(start);
  }, 120_000);

  it("verify --checkpoint catches an export cut at an earlier checkpoint with a recomputed end line; --witness names a missing cosignature", async () => {
    // A witness of this case's own cosigns one checkpoint, then the log grows past it (another sealed
    // registration): at least two checkpoints to cut between, and a final one this witness did not cosign.
    const lagging = await registerAndCosign("witness.test/lagging");
    const grown = await runInRunningHub(hub.dataDir, ["ledger", "witness", "add", generateSignerKey("witness.test/growth", SIGNATURE_TYPE.cosignatureV1).verifier]);
    expect(grown.code, grown.stderr).toBe(0);
    const dir = tempDir();
    const logKey = lagging.logKey;
    const keyFile = path.join(dir, "log.pub");
    fs.writeFileSync(keyFile, `${logKey}\n`);
    const head = await waitForGuestCosignature(lagging.size + 1);
    const exported = await runCli(["export", "--out", "full.export"], { LEASEHOLD_DATA_DIR: hub.dataDir }, 60_000, dir);
    expect(exported.code, exported.stderr).toBe(0);
    // What an auditor saves: the newest checkpoint, with its cosignatures, from the CLI.
    const saved = await runCli(["ledger", "checkpoint"], { LEASEHOLD_DATA_DIR: hub.dataDir });
    expect(saved.code, saved.stderr).toBe(0);
    const cpFile = path.join(dir, "saved.checkpoint");
    fs.writeFileSync(cpFile, saved.stdout);
    expect(sizeOf(saved.stdout)).toBe(head.size);

    const full = path.join(dir, "full.export");
    const truncated = path.join(dir, "cut.export");
    const cutAt = cutAtEarlierCheckpoint(full, truncated);
    expect(cutAt).toBeLessThan(head.size);
    const before = await runCli(["verify", truncated, "--key", keyFile]);
    expect(before.code, before.stdout).toBe(0);
    const after = await runCli(["verify", truncated, "--key", keyFile, "--checkpoint", cpFile]);
    expect(after.code, after.stdout).toBe(1);
    const gone = cutAt === head.size - 1 ? `entry ${cutAt} is missing` : `entries ${cutAt}..${head.size - 1} are missing`;
    expect(after.stdout).toContain(`but the supplied checkpoint is at size ${head.size}: ${gone}`);
    expect(after.stdout).not.toMatch(/first bad index/);
    const whole = await runCli(["verify", full, "--key", keyFile, "--checkpoint", cpFile]);
    expect(whole.code, whole.stdout).toBe(0);
    expect(whole.stdout).toMatch(/consistent with the supplied checkpoint \(size \d+/);

    // The guest's witness key (registered at enrolment) cosigned the final checkpoint; the lagging witness did not.
    const witnesses = await runInRunningHub(hub.dataDir, ["ledger", "witness", "list"]);
    const guestKey = witnesses.stdout.split("\n").map((l) => l.split(/\s+/)[2] ?? "").find((k) => k.includes("/leasehold-guest/"))!;
    const laggingKey = witnesses.stdout.split("\n").map((l) => l.split(/\s+/)[2] ?? "").find((k) => k.startsWith("witness.test/lagging+"))!;
    expect(laggingKey).toBe(lagging.witness.verifier);
    const byGuest = await runCli(["verify", full, "--key", keyFile, "--witness", guestKey]);
    expect(byGuest.code, byGuest.stdout).toBe(0);
    expect(byGuest.stdout).toMatch(/final:\s+the final checkpoint \(size \d+\) is cosigned by every witness given: .*\/leasehold-guest\//);
    const notBy = await runCli(["verify", full, "--key", keyFile, "--witness", laggingKey]);
    expect(notBy.code, notBy.stdout).toBe(1);
    expect(notBy.stdout).toMatch(
      new RegExp(`FAILED: line \\d+: the final checkpoint \\(size ${head.size}\\) carries no cosignature by a witness given with --witness: witness\\.test/lagging \\(key id [0-9a-f]{8}\\) last cosigned the checkpoint at size ${lagging.size}\\b`),
    );
    console.log(
      [
        `$ leasehold verify cut.export --key log.pub          # cut at size ${cutAt}, end line recomputed`,
        before.stdout,
        `$ leasehold verify cut.export --key log.pub --checkpoint saved.checkpoint`,
        after.stdout,
        `$ leasehold verify full.export --key log.pub --checkpoint saved.checkpoint`,
        whole.stdout,
        `$ leasehold verify full.export --key log.pub --witness <local guest's key>`,
        byGuest.stdout,
        `$ leasehold verify full.export --key log.pub --witness <witness.test/lagging key>`,
        notBy.stdout,
      ].join("\n"),
    );
  }, 180_000);

  it("health reports the ledger head", async () => {
    const h = await fullHealth<{ ledger: { head: { size: number } | null; integrator: { state: string } } }>(hub);
    expect(h.ledger.integrator.state).toBe("running");
    expect(h.ledger.head?.size).toBeGreaterThan(0);
  });

  it("refuses bad CLI use with a usage error", async () => {
    expect((await runCli(["export"])).code).toBe(2);
    expect((await runCli(["verify", "nofile"])).code).toBe(2);
    const r = await runCli(["verify", "/nonexistent", "--key", "x+00000000+AQ=="]);
    expect(r.code).toBe(2);
  });
});

/**
 * Registers a witness named `name` (a sealed step, so the log grows), waits
 * for the log to settle and posts that witness's cosignature of the newest
 * checkpoint over HTTP. Each case that needs a cosigning witness makes its
 * own, so the cases pass in any order.
 */
async function registerAndCosign(name: string) {
  const witness = generateSignerKey(name, SIGNATURE_TYPE.cosignatureV1);
  const added = await runInRunningHub(hub.dataDir, ["ledger", "witness", "add", witness.verifier]);
  expect(added.code, added.stderr).toBe(0);
  expect(added.stdout).toContain("registered");
  const note = await settledCheckpoint();
  const logKey = (await (await fetch(`${hub.url}/api/ledger/key`)).text()).trim();
  const size = Number(note.split("\n")[1]);
  const proof = (await (await fetch(`${hub.url}/api/ledger/proof/consistency?from=0&to=${size}`)).json()) as { proof: string[] };
  const signed = witnessCosign(initialWitnessState(note.split("\n")[0]!), note, proof.proof.map((p) => decodeBase64Strict(p)!), logKey, witness.signer);
  if (!signed.ok) throw new Error(signed.reason);
  const post = await fetch(`${hub.url}/api/ledger/cosignature`, { method: "POST", body: JSON.stringify({ size, line: signed.line }) });
  expect(post.status, await post.clone().text()).toBe(200);
  return { witness, note, size, line: signed.line, logKey };
}

async function checkpointNote(): Promise<string> {
  const res = await fetch(`${hub.url}/api/ledger/checkpoint`);
  if (!res.ok) throw new Error(`checkpoint: HTTP ${res.status}`);
  return res.text();
}

const sizeOf = (note: string): number => Number(note.split("\n")[1]);
const bodyOf = (note: string): string => note.slice(0, note.indexOf("\n\n") + 2);
/** Signature lines by a guest's witness key (named <hub>/leasehold-guest/<id>). */
const guestLines = (note: string): string[] => note.split("\n").filter((l) => /^\u2014 \S+\/leasehold-guest\/[0-9a-f]+ /.test(l));

/** Waits until the newest checkpoint is at least `minSize` and carries the local guest's cosignature. */
async function waitForGuestCosignature(minSize: number): Promise<{ size: number; note: string }> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const note = await checkpointNote().catch(() => "");
    if (note !== "" && sizeOf(note) >= minSize && guestLines(note).length > 0) return { size: sizeOf(note), note };
    if (Date.now() > deadline) throw new Error(`no guest cosignature on a checkpoint of size >= ${minSize}; newest:\n${note}\nhub:\n${hub.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The number of entries an export made now holds (every integrated entry). */
async function exportedEntries(): Promise<number> {
  const dir = tempDir();
  const out = await runInRunningHub(hub.dataDir, ["export", "--out", "count.export"], dir);
  if (out.code !== 0) throw new Error(out.stderr);
  const end = JSON.parse(fs.readFileSync(path.join(dir, "count.export"), "utf8").trimEnd().split("\n").at(-1)!) as { entries: number };
  return end.entries;
}

/**
 * Cuts an export right after its second-to-last checkpoint (and that
 * checkpoint's cosignatures) and writes an end line with matching counts:
 * what someone hiding the newest entries would hand an auditor.
 */
function cutAtEarlierCheckpoint(from: string, to: string): number {
  const lines = fs.readFileSync(from, "utf8").split(/(?<=\n)/);
  const kinds = lines.map((l) => (JSON.parse(l) as { kind?: string }).kind ?? "header");
  const checkpoints = kinds.flatMap((k, i) => (k === "checkpoint" ? [i] : []));
  if (checkpoints.length < 2) throw new Error("the export has fewer than two checkpoints");
  let end = checkpoints.at(-2)! + 1;
  while (kinds[end] === "cosignature") end += 1;
  const kept = lines.slice(0, end);
  const count = (kind: string) => kinds.slice(0, end).filter((k) => k === kind).length;
  const size = count("entry");
  const endLine = JSON.stringify({ checkpoints: count("checkpoint"), cosignatures: count("cosignature"), entries: size, kind: "end" });
  fs.writeFileSync(to, [...kept, `${endLine}\n`].join(""), { mode: 0o600 });
  return size;
}
