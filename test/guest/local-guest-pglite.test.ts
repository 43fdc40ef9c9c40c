/**
 * `leasehold start` (what `npm start` runs) on the embedded PGlite database
 * enrols and starts the local guest by itself: host "local" reports the
 * tier this machine's BPF loader proves (native bpfStatus(), asked here too)
 * with every worker self-tested, and witnesses the ledger.
 * LEASEHOLD_LOCAL_GUEST=0 turns it off; a bad value is refused naming it.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fullHealth, runCli, startHub, type RunningHub } from "../support/hub-process";
import { IMAGE_NAME, mountAt } from "../../agent-guest/workspace/index";
import { bpfStatus } from "../../native/index";
import { waitFor } from "./support";

describe("the local guest under `leasehold start` [pglite]", () => {
  const hubs: RunningHub[] = [];
  afterAll(async () => {
    await Promise.all(hubs.map((h) => h.stop()));
  }, 30_000);

  // The kernel is probed, not assumed: tier B on machines that refuse BPF-LSM loads, C where nothing loads.
  const tier = bpfStatus().tier;
  it(`enrols host local and reports it online with tier ${tier} (this machine's BPF verdict); the guest witnesses the log`, async () => {
    const hub = await startHub({});
    hubs.push(hub);
    await waitFor("the local guest banner", async () => /local guest: host "local"/.test(hub.output()), 20_000);
    const listing = await waitFor("local online", async () => {
      const r = await runCli(["host", "list"], { LEASEHOLD_DATA_DIR: hub.dataDir });
      return new RegExp(`local {2}online {2}tier ${tier}`).test(r.stdout) ? r.stdout : undefined;
    }, 30_000, 500);
    expect(listing).toMatch(new RegExp(`^local {2}online {2}tier ${tier}`, "m"));
    const key = fs.statSync(path.join(hub.dataDir, "guest", "host.key"));
    expect(key.mode & 0o777).toBe(0o600);
    const ceiling = fs.statSync(path.join(hub.dataDir, "guest-ceiling.json"));
    expect([ceiling.uid, ceiling.mode & 0o777]).toEqual([0, 0o600]);
    await waitFor("witness state", async () => fs.existsSync(path.join(hub.dataDir, "guest", "witness.json")), 20_000, 250);
    const health = await fullHealth<{ hosts: { enrolled: number; online: number } }>(hub);
    expect(health.hosts).toMatchObject({ enrolled: 1, online: 1 });
    // The workspace is the guest's bounded ext4 image, nosuid,nodev; stopping the hub stops the guest, which unmounts it.
    const workspace = path.join(hub.dataDir, "workspace");
    const image = path.join(hub.dataDir, "guest", IMAGE_NAME);
    expect(mountAt(workspace)).toMatchObject({ fstype: "ext4", options: expect.arrayContaining(["nosuid", "nodev"]) });
    expect(fs.statSync(image).size).toBe(1024 * 1024 * 1024);
    await hub.stop();
    expect(mountAt(workspace)).toBeNull();
    expect(execFileSync("losetup", ["-a"], { encoding: "utf8" })).not.toContain(image);
  }, 90_000);

  it("LEASEHOLD_LOCAL_GUEST=0 starts no guest; an invalid value is refused", async () => {
    const hub = await startHub({ LEASEHOLD_LOCAL_GUEST: "0" });
    hubs.push(hub);
    await waitFor("the ready banner", async () => /stop with Ctrl-C/.test(hub.output()), 20_000);
    expect(hub.output()).not.toMatch(/local guest/);
    const r = await runCli(["host", "list"], { LEASEHOLD_DATA_DIR: hub.dataDir });
    expect(r.stdout).toMatch(/no hosts/);
    const bad = await runCli(["host", "list"], { LEASEHOLD_LOCAL_GUEST: "yes" });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/LEASEHOLD_LOCAL_GUEST/);
  }, 90_000);
});
