import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openTrustedDir } from "./trusted-dir";

/**
 * The guest's one walk to a host directory: symlinks refused at any
 * component, a directory below a world-writable non-sticky one refused (its
 * name could be swapped by another user), a missing last component told
 * apart from a missing ancestor.
 */
describe("openTrustedDir", () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "lh-trusted-")));
  fs.chmodSync(base, 0o755);
  const good = path.join(base, "good", "app");
  fs.mkdirSync(good, { recursive: true });
  const open = path.join(base, "open");
  fs.mkdirSync(path.join(open, "app"), { recursive: true });
  fs.chmodSync(open, 0o777);
  const sticky = path.join(base, "sticky");
  fs.mkdirSync(path.join(sticky, "app"), { recursive: true });
  fs.chmodSync(sticky, 0o1777);
  fs.symlinkSync(path.join(base, "good"), path.join(base, "link"));
  fs.writeFileSync(path.join(base, "file"), "x");
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  it("opens a directory whose every ancestor is safe, and a sticky world-writable ancestor is safe too", () => {
    for (const dir of [good, path.join(sticky, "app")]) {
      const r = openTrustedDir(dir);
      expect(r.ok).toBe(true);
      if (r.ok) {
        expect(fs.fstatSync(r.fd).ino).toBe(fs.statSync(dir).ino);
        fs.closeSync(r.fd);
      }
    }
  });

  it("refuses a path through a symlink, naming the component", () => {
    expect(openTrustedDir(path.join(base, "link", "app"))).toEqual({ ok: false, problem: { kind: "symlink", at: path.join(base, "link") } });
    expect(openTrustedDir(path.join(base, "link"))).toEqual({ ok: false, problem: { kind: "symlink", at: path.join(base, "link") } });
  });

  it("refuses a directory below a world-writable ancestor without the sticky bit", () => {
    expect(openTrustedDir(path.join(open, "app"))).toEqual({ ok: false, problem: { kind: "world_writable", at: path.join(open, "app"), ancestor: open } });
  });

  it("tells a missing last component from a missing ancestor, and refuses a file and a path that is not normalised", () => {
    expect(openTrustedDir(path.join(base, "none"))).toEqual({ ok: false, problem: { kind: "missing", at: path.join(base, "none"), last: true } });
    expect(openTrustedDir(path.join(base, "none", "app"))).toEqual({ ok: false, problem: { kind: "missing", at: path.join(base, "none"), last: false } });
    expect(openTrustedDir(path.join(base, "file"))).toEqual({ ok: false, problem: { kind: "not_directory", at: path.join(base, "file") } });
    expect(openTrustedDir(`${base}/good/../good`)).toEqual({ ok: false, problem: { kind: "not_absolute" } });
    expect(openTrustedDir("/")).toEqual({ ok: false, problem: { kind: "not_absolute" } });
  });
});
