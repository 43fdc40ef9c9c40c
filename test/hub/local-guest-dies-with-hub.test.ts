/**
 * test-group: serial — a hub with its real local guest (sandbox probe, workspace volume), SIGKILLed.
 * The local guest ends with its hub (server/hosts/local-guest.ts): a hub
 * that is SIGKILLed — no shutdown code runs — still takes its guest down,
 * through the guest's own SIGTERM path (the workspace unmounted), within
 * seconds. Without it the guest kept running, and the next `leasehold start`
 * on that data directory ran a second one.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { guestArgv } from "../../server/hosts/local-guest";
import { alive, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { unmountLeftovers, waitFor } from "../guest/support";

/** How long the guest may take to stop after its hub died (its SIGTERM path: stop polling, unmount). */
const GUEST_EXIT_MS = 15_000;

function commandLine(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

describe("the local guest ends with its hub", () => {
  const strays: number[] = [];
  const dir = tempDir("lh-guest-dies-");
  let hub: RunningHub | undefined;
  afterAll(async () => {
    await hub?.stop("SIGKILL");
    // A guest that outlived its hub (the fault this file is about) is killed here, and its workspace unmounted.
    for (const pid of strays) if (alive(pid)) process.kill(pid, "SIGKILL");
    for (const until = Date.now() + 5_000; strays.some(alive) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    unmountLeftovers([dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`a SIGKILLed hub's local guest stops through its SIGTERM path within ${GUEST_EXIT_MS / 1000} s`, async () => {
    hub = await startHub({ LEASEHOLD_DATA_DIR: path.join(dir, "data") });
    const running = hub;
    const pid = await waitFor("the hub's line naming its local guest's pid", async () => {
      const found = /local guest: host "local" \(leasehold-guest, pid (\d+);/.exec(running.output())?.[1];
      return found === undefined ? undefined : Number(found);
    }, 60_000, 50);
    strays.push(pid);
    // The guest is node running leasehold-guest (setpriv has set the death signal and exec'd it, same pid),
    // and has mounted its workspace: it is past start-up, serving.
    await waitFor("the guest running as node with its workspace mounted", async () => {
      const argv = commandLine(pid);
      return (argv[0] === process.execPath && argv.some((a) => a.endsWith("leasehold-guest.mjs")) && /connecting to /.test(running.output())) || undefined;
    }, 60_000, 50);
    expect(alive(pid)).toBe(true);

    const killedAt = Date.now();
    await running.stop("SIGKILL");
    await waitFor(`the local guest (pid ${pid}) to exit after its hub was SIGKILLed`, async () => !alive(pid) || undefined, GUEST_EXIT_MS, 50);
    console.info(`local guest: exited ${Date.now() - killedAt} ms after its hub was SIGKILLed`);
    // Its own stop path ran (the guest's output still reaches the pipe the hub shared with it).
    await waitFor("the guest's line saying it unmounted its workspace", async () => /leasehold-guest: workspace .* unmounted/.test(running.output()) || undefined, 5_000, 50);
  }, 120_000);

  it("where the death signal cannot be arranged (no setpriv), the local guest is refused, naming what is missing", () => {
    const missing = path.join(tempDir("lh-no-setpriv-"), "setpriv");
    expect(() => guestArgv(["guest.mjs", "run"], missing)).toThrow(new RegExp(`${missing.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} \\(util-linux\\) is missing, so the local guest could not be tied to this hub's life`));
    expect(guestArgv(["guest.mjs", "run"])).toEqual(["/usr/bin/setpriv", "--pdeathsig", "TERM", "--", process.execPath, "guest.mjs", "run"]);
  });
});
