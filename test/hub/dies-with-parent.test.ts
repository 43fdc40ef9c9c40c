/**
 * A hub a test starts dies with the process that started it
 * (test/support/hub-process.ts, dyingWithParent). A vitest worker can end
 * while its hub is still starting — a beforeAll past its timeout, a worker
 * torn down at the end of its file — and a hub left behind keeps its port,
 * its data directory and CPU the rest of the suite needs.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, tempDir } from "../support/hub-process";
import { waitFor } from "../guest/support";

/**
 * Pids of the live (not zombie) node processes whose parent is `ppid` and
 * whose command line holds `needle`: node's, not setpriv's before its exec,
 * so the death signal is already set when the test kills the parent.
 */
function childrenOf(ppid: number, needle: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after the command name, which sits in parentheses and may hold spaces.
      const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (Number(parent) === ppid && state !== "Z" && argv[0] === process.execPath && argv.some((a) => a.includes(needle))) found.push(Number(name));
    } catch {
      // the process ended while it was read
    }
  }
  return found;
}

describe("test hubs die with the process that started them", () => {
  const dir = tempDir("lh-orphan-");
  const strays: number[] = [];
  afterAll(() => {
    for (const pid of strays) if (alive(pid)) process.kill(pid, "SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a worker SIGKILLed while its hub is still starting takes the hub with it", async () => {
    const worker = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "fixtures", "start-hub-then-wait.ts"), path.join(dir, "data")], { stdio: "ignore" });
    const exited = new Promise<void>((resolve) => worker.on("exit", () => resolve()));
    const [hub] = await waitFor("the hub process under the worker", async () => {
      const pids = childrenOf(worker.pid!, "leasehold.mjs");
      return pids.length > 0 ? pids : undefined;
    }, 60_000, 50);
    strays.push(hub!);
    worker.kill("SIGKILL");
    await exited;
    await waitFor("the hub to end after its worker", async () => !alive(hub!), 10_000, 50);
    expect(alive(hub!)).toBe(false);
  }, 90_000);
});
