// The workspace is always bound at /work; `cwd` only chooses the working
// directory (at or below /work).
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

let wd = "";
beforeAll(() => {
  setupNative();
  wd = makeWorkdir();
  mkdirSync(join(wd, "a", "b"), { recursive: true });
  chmodSync(join(wd, "a"), 0o777); // the lease uid owns only the workspace's top directory
  writeFileSync(join(wd, "top.txt"), "t");
});
afterAll(() => removeWorkdir(wd));

describe("cwd", () => {
  it("an existing sub-directory becomes the working directory; /work is still the workspace root", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", "pwd; ls /work"], cwd: "/work/a/b" });
    expect(r.exec_error).toBeNull();
    expect(r.stdout.toString()).toBe("/work/a/b\na\ntop.txt\n");
  });
  it("a relative write lands in the chosen sub-directory of the workspace", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", "echo hi > here.txt"], cwd: "/work/a" });
    expect(r.exit.code).toBe(0);
    expect(readFileSync(join(wd, "a", "here.txt"), "utf8")).toBe("hi\n");
  });
  it("a cwd that does not exist inside is exec_error ENOENT (nothing is created for it)", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/true"], cwd: "/work/missing/dir" });
    expect(r.exec_error).toBe("ENOENT");
    expect(r.exit.code).toBe(127);
  });
  it("a cwd outside /work is INVALID_ARGUMENT", async () => {
    for (const cwd of ["/tmp", "/", "/workx", "/usr/bin"]) {
      await expect(launch({ ...basePolicy(wd), cwd })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    }
  });
});
