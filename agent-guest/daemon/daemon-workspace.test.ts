import { generateKeyPairSync } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildNative } from "../../native/build.mjs";
import { generateSignerKey } from "../../server/trust/ledger/note";
import { generateCosignerKey } from "../../server/trust/ledger/witness";
import { rejectionOf } from "../../test/support/refusals";
import { mountAt } from "../workspace/index";
import { GuestDaemon } from "./daemon";
import { createHostKey, ensureStateDir, saveEnrolment, saveWitnessKey } from "./state";

/**
 * The daemon's side of the bounded workspace: run() mounts it before the
 * self-test or any job and unmounts it when it stops; a workspace_root it
 * may not mount over makes run() fail before anything else (no job could
 * run). The hub is unreachable here on purpose: nothing in this depends on it.
 */

let base: string;
let stateDir: string;
let ws: string;
const logs: string[] = [];

function ceilingFile(): string {
  const file = path.join(base, "ceiling.json");
  fs.writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      workspace_root: ws,
      workspace_max_bytes: 8 << 20,
      workspace_max_inodes: 256,
      exec_dirs: ["/bin", "/usr/bin"],
      egress: [],
      max: { memory_bytes: 1 << 30, cpus: 2, pids: 512, timeout_ms: 3600_000, output_bytes: 8 << 20, tmpfs_bytes: 256 << 20, tmpfs_inodes: 65_536 },
    }),
    { mode: 0o644 },
  );
  return file;
}

const daemon = () => new GuestDaemon({ stateDir, ceilingPath: ceilingFile(), log: (l) => logs.push(l), healthIntervalMs: 60_000, witnessIntervalMs: 60_000 });

describe.skipIf(process.getuid?.() !== 0)("guest daemon: the bounded workspace's life cycle (needs root)", () => {
  beforeAll(() => {
    buildNative({ quiet: true });
    base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-daemon-ws-"));
    fs.chmodSync(base, 0o755);
    stateDir = path.join(base, "state");
    ws = path.join(base, "workspace");
    ensureStateDir(stateDir);
    createHostKey(stateDir);
    saveWitnessKey(stateDir, generateCosignerKey("guest.test/witness").signer);
    const jobKey = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString();
    // A hub nobody listens on: port 9 on loopback refuses at once.
    saveEnrolment(stateDir, { hub: "http://127.0.0.1:9", host_id: "00000000-0000-4000-8000-000000000001", name: "t", job_key: jobKey, log_key: generateSignerKey("hub.test/log").verifier });
  }, 120_000);

  afterAll(() => {
    if (base && mountAt(ws) === null) fs.rmSync(base, { recursive: true, force: true });
  });

  it("run() mounts the workspace (ext4, nosuid,nodev) before anything else and unmounts it after shutdown()", async () => {
    const d = daemon();
    const running = d.run();
    for (let i = 0; i < 200 && mountAt(ws) === null; i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(mountAt(ws)).toMatchObject({ fstype: "ext4", options: expect.arrayContaining(["nosuid", "nodev"]) });
    await d.shutdown();
    await running;
    expect(mountAt(ws)).toBeNull();
    expect(logs.join("\n")).toMatch(/workspace .* unmounted/);
  }, 60_000);

  it("a non-empty workspace_root that is not its mount: run() refuses with one line (CONFIG_INVALID) and the files stay", async () => {
    // Its own operator's file in a directory it makes, removed afterwards: the cases run in any order.
    fs.mkdirSync(ws, { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(ws, "operator.txt"), "mine\n");
    try {
      const e = await rejectionOf(daemon().run());
      expect(e.code).toBe("CONFIG_INVALID");
      expect(e.message).toMatch(/is not empty/);
      expect(e.message).not.toContain("\n");
      expect(fs.readFileSync(path.join(ws, "operator.txt"), "utf8")).toBe("mine\n");
      expect(mountAt(ws)).toBeNull();
    } finally {
      if (mountAt(ws) === null) fs.rmSync(path.join(ws, "operator.txt"), { force: true });
    }
  }, 60_000);
});
