// This file starts (or tries to start) child processes, so it runs in a process of its own,
// outside the shared group: installing the guard here touches no other file.
import childProcess, { execFile, spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { isolationNeed } from "./test-groups.mjs";

describe("the shared group's guard (tools/lib/shared-guard.mjs)", () => {
  it("before it is installed a child process starts; after, every way to start one throws naming the way out, also through ESM named imports", async () => {
    expect(childProcess.spawnSync("true").status).toBe(0);
    const { SHARED_GUARD_MESSAGE } = await import("./shared-guard.mjs");
    const message = new RegExp(SHARED_GUARD_MESSAGE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    expect(SHARED_GUARD_MESSAGE).toMatch(/test-group: isolated <reason>/);
    expect(() => childProcess.spawnSync("true")).toThrow(message);
    expect(() => childProcess.execSync("true")).toThrow(message);
    expect(() => childProcess.execFileSync("true")).toThrow(message);
    expect(() => childProcess.exec("true")).toThrow(message);
    expect(() => childProcess.fork("./x.mjs")).toThrow(message);
    // A named import is the module's ESM view, which the guard keeps in line.
    expect(() => spawn("true")).toThrow(message);
    expect(() => execFile("true")).toThrow(message);
    // Loaded again (a second file in the same worker), it stays in place.
    await import(/* @vite-ignore */ `${new URL("./shared-guard.mjs", import.meta.url).href}?again`);
    expect(() => childProcess.spawnSync("true")).toThrow(message);
  });

  it("this file is itself kept out of the shared group", async () => {
    const fs = await import("node:fs");
    expect(isolationNeed(fs.readFileSync(new URL(import.meta.url), "utf8"))).toBe("starts child processes");
  });
});
