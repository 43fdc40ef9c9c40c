import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { acquireDataDirLock } from "../db/lock";
import { listenControlSocket } from "../hub/control-socket";
import { terminalContext } from "./terminal";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-cli-terminal-"));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const noWeb = () => Promise.reject(new Error("no web here"));

it("runningHub names the data directory only while its lock is held and a control socket is in place, and takes no lock itself", async () => {
  const ctx = terminalContext({ LEASEHOLD_DATA_DIR: dataDir }, dataDir, noWeb);
  expect(await ctx.runningHub!()).toBeUndefined();
  const lock = await acquireDataDirLock(fs.realpathSync(dataDir), "leasehold start");
  try {
    // Locked by a process with no control socket (a CLI, `migrate`): nothing to send a command to.
    expect(await ctx.runningHub!()).toBeUndefined();
    const socket = await listenControlSocket(dataDir, () => Promise.resolve(0));
    if (!("close" in socket)) throw new Error(socket.unavailable);
    try {
      expect(await ctx.runningHub!()).toBe(dataDir);
    } finally {
      await socket.close();
    }
  } finally {
    await lock.release();
  }
  // Asking took nothing: the lock can be taken again at once.
  const again = await acquireDataDirLock(fs.realpathSync(dataDir), "test");
  await again.release();
});

it("runningHub leaves a bad setting to the command: it answers undefined", async () => {
  const ctx = terminalContext({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_PORT: "not-a-port" }, dataDir, noWeb);
  expect(await ctx.runningHub!()).toBeUndefined();
});
