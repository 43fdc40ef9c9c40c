import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LeaseholdError } from "../../server/trust";
import { thrownBy } from "../../test/support/refusals";
import { Workspace, parseRelativePath, type WorkspaceOptions, type WorkspaceStage } from "./index";

/**
 * Hostile corpus for the workspace path module. Every refusal case asserts
 * the error code, that the message names the tier ("guest user-space path
 * check"), and that nothing changed on the host: the whole fixture (workspace
 * and the "outside" directory, symlinks not followed) and /etc/passwd hash
 * the same before and after.
 */

let base: string;
let ws: string;
let outside: string;
let sockServer: net.Server | undefined;
let hasDevice = false;

function snapshot(): string {
  const h = createHash("sha256");
  // Names as raw bytes: the fixture has a non-UTF-8 name.
  const walk = (dir: Buffer) => {
    for (const name of fs.readdirSync(dir, { encoding: "buffer" }).sort(Buffer.compare)) {
      const p = Buffer.concat([dir, Buffer.from("/"), name]);
      const st = fs.lstatSync(p);
      h.update(p);
      h.update(`\0${st.mode}\0${st.uid}\0`);
      if (st.isSymbolicLink()) h.update(`->${fs.readlinkSync(p, "utf8")}\0`);
      else if (st.isDirectory()) walk(p);
      else if (st.isFile()) h.update(fs.readFileSync(p));
    }
  };
  walk(Buffer.from(base));
  h.update(fs.readFileSync("/etc/passwd"));
  h.update(String(fs.existsSync("/etc/evil")));
  h.update(String(fs.existsSync("/tmp/x")));
  return h.digest("hex");
}

async function makeFixture(): Promise<void> {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-ws-"));
  ws = path.join(base, "ws");
  outside = path.join(base, "outside");
  fs.mkdirSync(path.join(ws, "sub", "deeper"), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "secret.txt"), "outside secret\n");
  fs.writeFileSync(path.join(ws, "sub", "file.txt"), "hello from the workspace\n");
  fs.writeFileSync(path.join(ws, "sub", "deeper", "d.txt"), "deep\n");
  fs.symlinkSync("/etc", path.join(ws, "link_etc"));
  fs.symlinkSync(outside, path.join(ws, "link_out"));
  fs.symlinkSync("../outside", path.join(ws, "link_out_rel"));
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "link_file"));
  fs.symlinkSync("sub", path.join(ws, "sublink"));
  fs.symlinkSync("nowhere", path.join(ws, "dangling"));
  fs.linkSync(path.join(outside, "secret.txt"), path.join(ws, "hardlink"));
  execFileSync("mkfifo", [path.join(ws, "fifo")]);
  try {
    execFileSync("mknod", [path.join(ws, "null"), "c", "1", "3"], { stdio: "ignore" });
    hasDevice = true;
  } catch {
    hasDevice = false;
  }
  sockServer = net.createServer();
  const server = sockServer;
  await new Promise<void>((resolve) => server.listen(path.join(ws, "sock"), resolve));
  fs.symlinkSync(ws, path.join(base, "ws_link"));
  fs.symlinkSync(base, path.join(base, "base_link"));
}

async function removeFixture(): Promise<void> {
  const server = sockServer;
  sockServer = undefined;
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(base, { recursive: true, force: true });
}


function expectRefusal(code: string, fn: () => unknown): LeaseholdError {
  const before = snapshot();
  const e = thrownBy(fn);
  expect(e.code).toBe(code);
  expect(e.tier).toBe("guest");
  expect(e.message).toMatch(/^guest user-space path check: /);
  expect(snapshot()).toBe(before);
  expect(fs.readdirSync(path.join(ws)).filter((n) => n.startsWith(".lh-tmp-"))).toEqual([]);
  return e;
}

const open = (opts: WorkspaceOptions = {}) => Workspace.open(ws, opts);
const bytes = (s: string) => Buffer.from(s);

describe("workspace hostile corpus", () => {
  beforeAll(makeFixture);
  afterAll(removeFixture);

  type Case = [name: string, code: string, run: (w: Workspace) => unknown];
  const cases: Case[] = [
    // read
    ["read ../outside/secret.txt", "POLICY_REFUSED", (w) => w.read("../outside/secret.txt")],
    ["read a/../../outside/secret.txt", "POLICY_REFUSED", (w) => w.read("a/../../outside/secret.txt")],
    ["read sub/../sub/file.txt (any .. is refused)", "POLICY_REFUSED", (w) => w.read("sub/../sub/file.txt")],
    ["read ..", "POLICY_REFUSED", (w) => w.read("..")],
    ["read /etc/passwd", "POLICY_REFUSED", (w) => w.read("/etc/passwd")],
    ["read //etc/passwd", "POLICY_REFUSED", (w) => w.read("//etc/passwd")],
    ["read through symlink to /etc", "POLICY_REFUSED", (w) => w.read("link_etc/passwd")],
    ["read through symlink to outside dir", "POLICY_REFUSED", (w) => w.read("link_out/secret.txt")],
    ["read through relative symlink to outside", "POLICY_REFUSED", (w) => w.read("link_out_rel/secret.txt")],
    ["read a symlink to an outside file", "POLICY_REFUSED", (w) => w.read("link_file")],
    ["read through a symlink that stays inside", "POLICY_REFUSED", (w) => w.read("sublink/file.txt")],
    ["read a dangling symlink", "POLICY_REFUSED", (w) => w.read("dangling")],
    ["read a fifo", "POLICY_REFUSED", (w) => w.read("fifo")],
    ["read a unix socket", "POLICY_REFUSED", (w) => w.read("sock")],
    ["read a hard link to an outside file", "POLICY_REFUSED", (w) => w.read("hardlink")],
    ["read a directory", "INVALID_ARGUMENT", (w) => w.read("sub")],
    ["read the root", "INVALID_ARGUMENT", (w) => w.read(".")],
    ["read empty path", "INVALID_ARGUMENT", (w) => w.read("")],
    ["read missing file", "NOT_FOUND", (w) => w.read("missing.txt")],
    ["read through a file as if a directory", "INVALID_ARGUMENT", (w) => w.read("sub/file.txt/x")],
    ["read with NUL", "INVALID_ARGUMENT", (w) => w.read("sub/file.txt\0.png")],
    ["read with newline", "INVALID_ARGUMENT", (w) => w.read("sub/\nfile.txt")],
    ["read a 256-byte component", "INVALID_ARGUMENT", (w) => w.read("a".repeat(256))],
    ["read a 128-char multibyte component (384 bytes)", "INVALID_ARGUMENT", (w) => w.read("é".repeat(128))],
    ["read a 5000-byte path", "INVALID_ARGUMENT", (w) => w.read("a/".repeat(2500))],
    ["read 65 components deep", "INVALID_ARGUMENT", (w) => w.read("d/".repeat(65) + "f")],
    ["read with a lone surrogate", "INVALID_ARGUMENT", (w) => w.read("sub/\uD800")],
    ["read with negative offset", "INVALID_ARGUMENT", (w) => w.read("sub/file.txt", { offset: -1 })],
    ["read with oversized limit", "INVALID_ARGUMENT", (w) => w.read("sub/file.txt", { limit: 64 * 1024 * 1024 })],
    ["read a non-string path", "INVALID_ARGUMENT", (w) => w.read(42 as unknown as string)],
    // write
    ["write ../escape.txt", "POLICY_REFUSED", (w) => w.write("../escape.txt", bytes("x"))],
    ["write /tmp/x (absolute)", "POLICY_REFUSED", (w) => w.write("/tmp/x", bytes("x"))],
    ["write through symlink to outside", "POLICY_REFUSED", (w) => w.write("link_out/new.txt", bytes("x"))],
    ["write through symlink to /etc", "POLICY_REFUSED", (w) => w.write("link_etc/evil", bytes("x"))],
    ["write over a symlink to an outside file", "POLICY_REFUSED", (w) => w.write("link_file", bytes("pwned"))],
    ["write over a dangling symlink", "POLICY_REFUSED", (w) => w.write("dangling", bytes("x"))],
    ["write creating parents under a symlink", "POLICY_REFUSED", (w) => w.write("link_out/a/b/c.txt", bytes("x"))],
    ["write through an inside symlink", "POLICY_REFUSED", (w) => w.write("sublink/new.txt", bytes("x"))],
    ["write to a fifo", "POLICY_REFUSED", (w) => w.write("fifo", bytes("x"))],
    ["write to a socket", "POLICY_REFUSED", (w) => w.write("sock", bytes("x"))],
    ["write over a directory", "INVALID_ARGUMENT", (w) => w.write("sub", bytes("x"))],
    ["write the root", "INVALID_ARGUMENT", (w) => w.write("", bytes("x"))],
    ["write above the size limit", "POLICY_REFUSED", (w) => w.write("big.bin", Buffer.alloc(8 * 1024 * 1024 + 1))],
    ["write with NUL", "INVALID_ARGUMENT", (w) => w.write("a\0b", bytes("x"))],
    ["write a 256-byte name", "INVALID_ARGUMENT", (w) => w.write("n".repeat(256), bytes("x"))],
    ["write without parents when createParents=false", "NOT_FOUND", (w) => w.write("nope/a.txt", bytes("x"), { createParents: false })],
    ["write under a file", "INVALID_ARGUMENT", (w) => w.write("sub/file.txt/child", bytes("x"))],
    ["write a reserved temp name", "INVALID_ARGUMENT", (w) => w.write(".lh-tmp-abc", bytes("x"))],
    ["write a/../../b", "POLICY_REFUSED", (w) => w.write("a/../../b", bytes("x"))],
    // list
    ["list ..", "POLICY_REFUSED", (w) => w.list("..")],
    ["list ../outside", "POLICY_REFUSED", (w) => w.list("../outside")],
    ["list /", "POLICY_REFUSED", (w) => w.list("/")],
    ["list a symlink to /etc", "POLICY_REFUSED", (w) => w.list("link_etc")],
    ["list a symlink to outside", "POLICY_REFUSED", (w) => w.list("link_out")],
    ["list a file", "INVALID_ARGUMENT", (w) => w.list("sub/file.txt")],
    ["list a missing dir", "NOT_FOUND", (w) => w.list("missing")],
    ["list with limit 201", "INVALID_ARGUMENT", (w) => w.list("", { limit: 201 })],
    ["list with fractional offset", "INVALID_ARGUMENT", (w) => w.list("", { offset: 1.5 })],
  ];

  it.each(cases)("%s", (_name, code, run) => {
    const w = open();
    expectRefusal(code, () => run(w));
  });

  it("read a character device", () => {
    if (!hasDevice) return; // mknod not permitted in this environment
    expectRefusal("POLICY_REFUSED", () => open().read("null"));
  });

  it("names the reason for a symlinked component", () => {
    const e = expectRefusal("POLICY_REFUSED", () => open().read("link_etc/passwd"));
    expect(e.message).toContain("symlinked path component link_etc");
  });
});

describe("workspace root checks", () => {
  beforeAll(makeFixture);
  afterAll(removeFixture);

  it.each<[string, string, () => string]>([
    ["root is a symlink", "POLICY_REFUSED", () => path.join(base, "ws_link")],
    ["root has a symlinked parent", "POLICY_REFUSED", () => path.join(base, "base_link", "ws")],
    ["root is relative", "INVALID_ARGUMENT", () => "relative/ws"],
    ["root is not normalised", "INVALID_ARGUMENT", () => `${ws}/../ws`],
    ["root has a trailing slash", "INVALID_ARGUMENT", () => `${ws}/`],
    ["root is /", "POLICY_REFUSED", () => "/"],
    ["root is a file", "INVALID_ARGUMENT", () => path.join(ws, "sub", "file.txt")],
    ["root does not exist", "NOT_FOUND", () => path.join(base, "missing")],
    ["root has NUL", "INVALID_ARGUMENT", () => `${ws}\0x`],
  ])("%s", (_name, code, root) => {
    expectRefusal(code, () => Workspace.open(root()));
  });

  it("refuses every operation once the root is swapped for a symlink", () => {
    const w = open();
    const moved = path.join(base, "ws_moved");
    fs.renameSync(ws, moved);
    fs.symlinkSync(moved, ws);
    try {
      expectRefusal("POLICY_REFUSED", () => w.read("sub/file.txt"));
      expectRefusal("POLICY_REFUSED", () => w.write("sub/new.txt", bytes("x")));
      expectRefusal("POLICY_REFUSED", () => w.list(""));
    } finally {
      fs.unlinkSync(ws);
      fs.renameSync(moved, ws);
    }
  });

  it("refuses once the root is replaced by another directory", () => {
    const w = open();
    const moved = path.join(base, "ws_moved");
    fs.renameSync(ws, moved);
    fs.mkdirSync(ws);
    try {
      expectRefusal("POLICY_REFUSED", () => w.list(""));
    } finally {
      fs.rmdirSync(ws);
      fs.renameSync(moved, ws);
    }
  });
});

describe("workspace races (TOCTOU attempts through the onStage seam)", () => {
  afterEach(removeFixture);

  const swapAt = (stage: WorkspaceStage, at: string, swap: () => void): WorkspaceOptions => ({
    onStage: (s, rel) => {
      if (s === stage && rel === at) swap();
    },
  });

  it("directory swapped for a symlink to outside after its check: refused, nothing outside touched", async () => {
    await makeFixture();
    const w = open(
      swapAt("component-checked", "sub", () => {
        fs.renameSync(path.join(ws, "sub"), path.join(base, "sub_aside"));
        fs.symlinkSync(outside, path.join(ws, "sub"));
      }),
    );
    const secretBefore = fs.readFileSync(path.join(outside, "secret.txt"));
    const e = thrownBy(() => w.write("sub/secret.txt", bytes("pwned")));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.message).toContain("race detected");
    expect(fs.readFileSync(path.join(outside, "secret.txt"))).toEqual(secretBefore);
    expect(fs.readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it("file swapped for a symlink to an outside file after its check: read refused", async () => {
    await makeFixture();
    const w = open(
      swapAt("target-checked", "sub/file.txt", () => {
        fs.unlinkSync(path.join(ws, "sub", "file.txt"));
        fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "sub", "file.txt"));
      }),
    );
    const e = thrownBy(() => w.read("sub/file.txt"));
    expect(e.code).toBe("POLICY_REFUSED");
    // The freed inode number is often reused by the new symlink, so the type
    // check (not the inode comparison) may be the one that fires; either refuses.
    expect(e.message).toMatch(/replaced during the check|is a symlink/);
  });

  it("file swapped for a hard link to an outside file after its check: read refused", async () => {
    await makeFixture();
    const w = open(
      swapAt("target-checked", "sub/file.txt", () => {
        fs.unlinkSync(path.join(ws, "sub", "file.txt"));
        fs.linkSync(path.join(outside, "secret.txt"), path.join(ws, "sub", "file.txt"));
      }),
    );
    expect(thrownBy(() => w.read("sub/file.txt")).code).toBe("POLICY_REFUSED");
  });

  it("file swapped for a fifo after its check: read refused without opening the fifo", async () => {
    await makeFixture();
    const w = open(
      swapAt("target-checked", "sub/file.txt", () => {
        fs.unlinkSync(path.join(ws, "sub", "file.txt"));
        execFileSync("mkfifo", [path.join(ws, "sub", "file.txt")]);
      }),
    );
    expect(thrownBy(() => w.read("sub/file.txt")).code).toBe("POLICY_REFUSED");
  });

  it("target swapped for a symlink just before the rename: the symlink is replaced, the outside file is untouched", async () => {
    await makeFixture();
    const target = path.join(ws, "sub", "file.txt");
    const w = open(
      swapAt("before-commit", "sub/file.txt", () => {
        fs.unlinkSync(target);
        fs.symlinkSync(path.join(outside, "secret.txt"), target);
      }),
    );
    const r = w.write("sub/file.txt", bytes("new content"));
    expect(r.bytes).toBe(11);
    expect(fs.lstatSync(target).isFile()).toBe(true);
    expect(fs.readFileSync(target, "utf8")).toBe("new content");
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("outside secret\n");
  });

  it("parent directory moved out of the workspace after it was opened: write refused (resolved escape)", async () => {
    await makeFixture();
    const w = open(
      swapAt("before-commit", "sub/new.txt", () => {
        fs.renameSync(path.join(ws, "sub"), path.join(outside, "sub"));
      }),
    );
    const e = thrownBy(() => w.write("sub/new.txt", bytes("x")));
    expect(e.code).toBe("POLICY_REFUSED");
    expect(e.message).toContain("resolved escape");
    expect(fs.existsSync(path.join(outside, "sub", "new.txt"))).toBe(false);
    expect(fs.readdirSync(path.join(outside, "sub")).filter((n) => n.startsWith(".lh-tmp-"))).toEqual([]);
  });
});

describe("workspace operations that succeed", () => {
  beforeAll(makeFixture);
  afterAll(removeFixture);

  it("reads with paging", () => {
    const w = open();
    const all = w.read("sub/file.txt");
    expect(all.content.toString()).toBe("hello from the workspace\n");
    expect(all.has_more).toBe(false);
    expect(all.sha256).toBe(createHash("sha256").update(all.content).digest("hex"));
    const page = w.read("./sub//file.txt", { offset: 6, limit: 4 });
    expect(page.content.toString()).toBe("from");
    expect(page).toMatchObject({ offset: 6, bytes: 4, total_bytes: 25, has_more: true, path: "sub/file.txt" });
    expect(w.read("sub/file.txt", { offset: 100 })).toMatchObject({ bytes: 0, has_more: false });
  });

  it("writes atomically, creating parents, and leaves no temp file", () => {
    const w = open();
    const r = w.write("new/dir/out.bin", Buffer.from([0, 1, 2, 255]));
    expect(r).toMatchObject({ path: "new/dir/out.bin", bytes: 4, created: true });
    expect(fs.readFileSync(path.join(ws, "new", "dir", "out.bin"))).toEqual(Buffer.from([0, 1, 2, 255]));
    const again = w.write("new/dir/out.bin", bytes("replaced"));
    expect(again.created).toBe(false);
    expect(fs.readFileSync(path.join(ws, "new", "dir", "out.bin"), "utf8")).toBe("replaced");
    expect(fs.readdirSync(path.join(ws, "new", "dir"))).toEqual(["out.bin"]);
  });

  it("keeps an existing file's mode and the parent's owner", () => {
    const w = open();
    const p = path.join(ws, "sub", "mode.sh");
    fs.writeFileSync(p, "#!/bin/sh\n");
    fs.chmodSync(p, 0o750);
    w.write("sub/mode.sh", bytes("#!/bin/sh\necho hi\n"));
    expect(fs.statSync(p).mode & 0o777).toBe(0o750);
    if (process.getuid?.() === 0) {
      fs.mkdirSync(path.join(ws, "owned"));
      fs.chownSync(path.join(ws, "owned"), 1234, 1234);
      w.write("owned/f.txt", bytes("x"));
      expect(fs.statSync(path.join(ws, "owned", "f.txt")).uid).toBe(1234);
    }
  });

  it("lists sorted, paged, without following symlinks", () => {
    const w = open();
    const first = w.list("", { limit: 3 });
    expect(first.entries.map((e) => e.name)).toEqual(["dangling", "fifo", "hardlink"]);
    expect(first.has_more).toBe(true);
    const all = w.list(".", { limit: 200 });
    const byName = Object.fromEntries(all.entries.map((e) => [e.name, e]));
    expect(byName.link_etc?.type).toBe("symlink");
    expect(byName.fifo?.type).toBe("fifo");
    expect(byName.sock?.type).toBe("socket");
    expect(byName.sub?.type).toBe("directory");
    expect(all.has_more).toBe(false);
    expect(w.list("sub").entries.find((e) => e.name === "file.txt")).toEqual({ name: "file.txt", name_encoding: "utf8", type: "file", size: 25 });
  });

  it("reports non-UTF-8 names in base64 and refuses huge directories", () => {
    fs.mkdirSync(path.join(ws, "odd"));
    fs.writeFileSync(Buffer.concat([Buffer.from(path.join(ws, "odd") + "/x"), Buffer.from([0xff])]), "");
    const w = Workspace.open(ws, { limits: { maxListScan: 3 } });
    expect(w.list("odd").entries).toEqual([{ name: Buffer.from([0x78, 0xff]).toString("base64"), name_encoding: "base64", type: "file", size: 0 }]);
    expectRefusal("POLICY_REFUSED", () => w.list(""));
  });

  it("parses relative paths lexically", () => {
    expect(parseRelativePath("a/./b//c/")).toEqual(["a", "b", "c"]);
    expect(parseRelativePath("")).toEqual([]);
    expect(parseRelativePath("~/x")).toEqual(["~", "x"]);
  });
});
