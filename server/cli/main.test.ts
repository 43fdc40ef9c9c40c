import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { listenControlSocket, type ControlRequest } from "../hub/control-socket";
import type { CliContext } from "./context";
import { COMMANDS, helpText, main } from "./main";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-cli-main-"));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/** A terminal-like context that records what it was asked; `hub` is what runningHub answers. */
function context(hub: string | undefined) {
  const seen = { out: [] as string[], err: [] as string[], databaseOpened: 0, hubAsked: 0 };
  const ctx: CliContext = {
    out: (line) => seen.out.push(line),
    err: (line) => seen.err.push(line),
    env: { LEASEHOLD_DATA_DIR: dataDir, PATH: "/usr/bin" },
    cwd: dataDir,
    loadWeb: () => Promise.reject(new Error("no web here")),
    withDatabase: () => {
      seen.databaseOpened += 1;
      return Promise.reject(new Error("this test opens no database"));
    },
    runningHub: () => {
      seen.hubAsked += 1;
      return Promise.resolve(hub);
    },
  };
  return { ctx, seen };
}

it("every command in the table loads a module of the same name, and --help lists each one", async () => {
  const text = await helpText();
  for (const entry of COMMANDS) {
    const command = await entry.load();
    expect(command.name).toBe(entry.name);
    expect(text).toContain(`  ${entry.name}`);
  }
});

it("while a hub holds the database, a database command goes to the hub whole: argv, the LEASEHOLD_ settings and cwd, its output and exit status; nothing runs here", async () => {
  const received: ControlRequest[] = [];
  const socket = await listenControlSocket(dataDir, (request, output) => {
    received.push(request);
    output.out("from the hub");
    output.err("a warning from the hub");
    return Promise.resolve(3);
  });
  if (!("close" in socket)) throw new Error(socket.unavailable);
  try {
    const { ctx, seen } = context(dataDir);
    expect(await main(["approvals", "bogus-subcommand", "--as", "ops"], ctx)).toBe(3);
    expect(received).toEqual([{ argv: ["approvals", "bogus-subcommand", "--as", "ops"], env: { LEASEHOLD_DATA_DIR: dataDir }, cwd: dataDir }]);
    expect(seen.out).toEqual(["from the hub"]);
    expect(seen.err).toEqual(["a warning from the hub"]);
    expect(seen.databaseOpened).toBe(0);
  } finally {
    await socket.close();
  }
});

it("without a running hub the command runs here (and its usage error is its own); `--help`, `verify` and `start` never ask for a hub", async () => {
  const alone = context(undefined);
  expect(await main(["approvals", "list"], alone.ctx)).toBe(1);
  expect(alone.seen.databaseOpened).toBe(1);
  expect(alone.seen.err.join("\n")).toContain("this test opens no database");
  expect(await main(["approvals", "bogus-subcommand"], alone.ctx)).toBe(2);
  expect(alone.seen.err.at(-1)).toMatch(/^leasehold approvals: unknown subcommand "bogus-subcommand"/);

  const held = context(dataDir);
  expect(await main(["approvals", "--help"], held.ctx)).toBe(0);
  expect(held.seen.out.join("\n")).toMatch(/^usage: leasehold approvals list/);
  expect(await main(["verify"], held.ctx)).toBe(2);
  expect(await main(["start", "--help"], held.ctx)).toBe(0);
  expect(held.seen.hubAsked).toBe(0);
});
