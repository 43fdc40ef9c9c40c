import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { thrownBy } from "../../test/support/refusals";
import { BUNDLE_SCHEMA, bundleDigest, readBundleDir } from "../../server/trust/bundle";
import { installBundle, loadVerifiedBundle, storeEntryName } from "./bundle";

/**
 * Worker identity: a bundle's digest is over (path, content hash) of every
 * file; the guest's store holds it content-addressed and read-only, and
 * every launch re-reads and re-hashes it — a changed byte, an added file, a
 * symlink swapped in, a file replaced after install are all refused with
 * WORKER_DIGEST_MISMATCH.
 */

const base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-bundle-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const MANIFEST = { schema: BUNDLE_SCHEMA, capability: "apk-static", version: "1.0.0", runtime: "node", entry: "worker.mjs" };
let n = 0;
let source: string;
let store: string;

function writeSource(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

beforeEach(() => {
  n += 1;
  source = path.join(base, `src-${n}`);
  store = path.join(base, `store-${n}`);
  writeSource(source, { "bundle.json": JSON.stringify(MANIFEST), "worker.mjs": 'console.log("{}");\n' });
});

/** Makes an entry writable again (as an attacker with root would), runs `fn`, seals nothing back. */
function tamper(dir: string, fn: () => void): void {
  fs.chmodSync(dir, 0o755);
  fn();
}

describe("bundleDigest", () => {
  it("is over the sorted (path, content) listing: order of the input does not matter, any byte, name or move of bytes does", () => {
    const a = { path: "a", bytes: Buffer.from("x") };
    const b = { path: "b", bytes: Buffer.from("yz") };
    const d = bundleDigest([a, b]);
    expect(d).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(bundleDigest([b, a])).toBe(d);
    expect(bundleDigest([a, { path: "b", bytes: Buffer.from("yZ") }])).not.toBe(d);
    expect(bundleDigest([{ path: "c", bytes: a.bytes }, b])).not.toBe(d);
    expect(bundleDigest([{ path: "a", bytes: Buffer.from("xy") }, { path: "b", bytes: Buffer.from("z") }])).not.toBe(d);
    expect(bundleDigest([a, b, { path: "e", bytes: Buffer.alloc(0) }])).not.toBe(d);
  });

  it("refuses names that could escape or forge a listing line", () => {
    for (const bad of ["../x", "a/../b", "/abs", "a//b", "./a", "a\nb", "a\0b", ""]) {
      expect(() => bundleDigest([{ path: bad, bytes: Buffer.alloc(0) }])).toThrow(/worker bundle/);
    }
    expect(() => bundleDigest([{ path: "a", bytes: Buffer.alloc(0) }, { path: "a", bytes: Buffer.alloc(1) }])).toThrow(/twice/);
  });
});

describe("installBundle / loadVerifiedBundle", () => {
  it("installs content-addressed and read-only (store 0700, entry 0555, files 0444, owned by us) and loads the entry bytes verified", () => {
    const installed = installBundle(source, store);
    const read = readBundleDir(source);
    expect(installed.digest).toBe(read.digest);
    const entryDir = path.join(store, storeEntryName(installed.digest));
    expect(fs.statSync(store).mode & 0o777).toBe(0o700);
    expect(fs.statSync(entryDir).mode & 0o777).toBe(0o555);
    for (const name of ["bundle.json", "worker.mjs"]) {
      const st = fs.statSync(path.join(entryDir, name));
      expect(st.mode & 0o777).toBe(0o444);
      expect(st.uid).toBe(process.getuid?.());
    }
    expect(fs.readdirSync(store)).toEqual([storeEntryName(installed.digest)]);
    const loaded = loadVerifiedBundle(store, installed.digest);
    expect(loaded.entry.toString()).toBe('console.log("{}");\n');
    expect(loaded.manifest).toEqual(MANIFEST);
    // A second install of the same source re-verifies the entry and leaves one entry.
    expect(installBundle(source, store).digest).toBe(installed.digest);
    expect(fs.readdirSync(store)).toEqual([storeEntryName(installed.digest)]);
  });

  it("a changed byte after install is refused with WORKER_DIGEST_MISMATCH naming the digest it hashes to", () => {
    const { digest } = installBundle(source, store);
    const entryDir = path.join(store, storeEntryName(digest));
    tamper(entryDir, () => {
      fs.chmodSync(path.join(entryDir, "worker.mjs"), 0o644);
      fs.writeFileSync(path.join(entryDir, "worker.mjs"), 'console.log("{!}");\n');
      fs.chmodSync(path.join(entryDir, "worker.mjs"), 0o444);
    });
    fs.chmodSync(entryDir, 0o555);
    const e = thrownBy(() => loadVerifiedBundle(store, digest));
    expect(e.code).toBe("WORKER_DIGEST_MISMATCH");
    expect(e.details?.["expected"]).toBe(digest);
    expect(e.details?.["actual"]).toMatch(/^sha256:/);
    expect(e.details?.["actual"]).not.toBe(digest);
  });

  it("an added file is refused", () => {
    const { digest } = installBundle(source, store);
    const entryDir = path.join(store, storeEntryName(digest));
    tamper(entryDir, () => fs.writeFileSync(path.join(entryDir, "extra.mjs"), "", { mode: 0o444 }));
    fs.chmodSync(entryDir, 0o555);
    expect(thrownBy(() => loadVerifiedBundle(store, digest)).code).toBe("WORKER_DIGEST_MISMATCH");
  });

  it("a symlink swapped in for the entry (to a file with the very same bytes) is refused, not followed", () => {
    const { digest } = installBundle(source, store);
    const entryDir = path.join(store, storeEntryName(digest));
    const twin = path.join(base, `twin-${n}.mjs`);
    fs.writeFileSync(twin, 'console.log("{}");\n', { mode: 0o444 });
    tamper(entryDir, () => {
      fs.rmSync(path.join(entryDir, "worker.mjs"));
      fs.symlinkSync(twin, path.join(entryDir, "worker.mjs"));
    });
    fs.chmodSync(entryDir, 0o555);
    const e = thrownBy(() => loadVerifiedBundle(store, digest));
    expect(e.code).toBe("WORKER_DIGEST_MISMATCH");
    expect(e.message).toContain("worker.mjs");
  });

  it("a file replaced (renamed over) between install and launch is refused, even with its mode kept read-only", () => {
    const { digest } = installBundle(source, store);
    const entryDir = path.join(store, storeEntryName(digest));
    tamper(entryDir, () => {
      fs.writeFileSync(path.join(entryDir, ".new"), 'process.exit(0)\n', { mode: 0o444 });
      fs.renameSync(path.join(entryDir, ".new"), path.join(entryDir, "worker.mjs"));
    });
    fs.chmodSync(entryDir, 0o555);
    expect(thrownBy(() => loadVerifiedBundle(store, digest)).code).toBe("WORKER_DIGEST_MISMATCH");
  });

  it("a whole entry directory swapped for a symlink to a good copy is refused", () => {
    const { digest } = installBundle(source, store);
    const name = storeEntryName(digest);
    fs.renameSync(path.join(store, name), path.join(base, `moved-${n}`));
    fs.symlinkSync(path.join(base, `moved-${n}`), path.join(store, name));
    expect(thrownBy(() => loadVerifiedBundle(store, digest)).code).toBe("WORKER_DIGEST_MISMATCH");
  });

  it("an entry made writable is refused even with unchanged content (no one may be able to change it before the next launch)", () => {
    const { digest } = installBundle(source, store);
    fs.chmodSync(path.join(store, storeEntryName(digest), "worker.mjs"), 0o644);
    expect(thrownBy(() => loadVerifiedBundle(store, digest)).code).toBe("WORKER_DIGEST_MISMATCH");
  });

  it("reinstalling over a tampered entry replaces it with the shipped bytes", () => {
    const { digest } = installBundle(source, store);
    const entryDir = path.join(store, storeEntryName(digest));
    tamper(entryDir, () => fs.writeFileSync(path.join(entryDir, "extra"), "x"));
    expect(installBundle(source, store).digest).toBe(digest);
    expect(fs.readdirSync(entryDir).sort()).toEqual(["bundle.json", "worker.mjs"]);
    expect(loadVerifiedBundle(store, digest).entry.toString()).toBe('console.log("{}");\n');
  });

  it("a digest that is not installed is NOT_FOUND; a malformed one INVALID_ARGUMENT", () => {
    installBundle(source, store);
    expect(thrownBy(() => loadVerifiedBundle(store, `sha256:${"0".repeat(64)}`)).code).toBe("NOT_FOUND");
    expect(thrownBy(() => loadVerifiedBundle(store, "sha256:../../etc")).code).toBe("INVALID_ARGUMENT");
  });

  it("a store root open to others or a symlinked store root is refused", () => {
    installBundle(source, store);
    fs.chmodSync(store, 0o755);
    expect(thrownBy(() => installBundle(source, store)).code).toBe("CONFIG_INVALID");
    fs.chmodSync(store, 0o700);
    const link = path.join(base, `store-link-${n}`);
    fs.symlinkSync(store, link);
    expect(thrownBy(() => loadVerifiedBundle(link, readBundleDir(source).digest)).code).toBe("CONFIG_INVALID");
  });
});

describe("readBundleDir (the source is read strictly)", () => {
  it("refuses a symlink, a fifo, a missing entry, extra manifest fields and too many files", () => {
    fs.symlinkSync("/etc/hostname", path.join(source, "link"));
    expect(thrownBy(() => readBundleDir(source)).message).toContain("link");
    fs.rmSync(path.join(source, "link"));
    fs.mkdirSync(path.join(source, "sub"));
    fs.symlinkSync("/etc", path.join(source, "sub", "dir"));
    expect(thrownBy(() => readBundleDir(source)).code).toBe("INVALID_ARGUMENT");
    fs.rmSync(path.join(source, "sub"), { recursive: true });
    execFileSync("mkfifo", [path.join(source, "pipe")]);
    expect(thrownBy(() => readBundleDir(source)).message).toContain("pipe is not a regular file");
    fs.rmSync(path.join(source, "pipe"));
    fs.writeFileSync(path.join(source, "bundle.json"), JSON.stringify({ ...MANIFEST, entry: "missing.mjs" }));
    expect(thrownBy(() => readBundleDir(source)).message).toContain("missing.mjs");
    fs.writeFileSync(path.join(source, "bundle.json"), JSON.stringify({ ...MANIFEST, extra: 1 }));
    expect(thrownBy(() => readBundleDir(source)).code).toBe("INVALID_ARGUMENT");
    fs.writeFileSync(path.join(source, "bundle.json"), JSON.stringify(MANIFEST));
    for (let i = 0; i < 64; i += 1) fs.writeFileSync(path.join(source, `f${i}`), "");
    expect(thrownBy(() => readBundleDir(source)).message).toContain("more than 64 files");
  });

  it("refuses a hard-linked file (its content could be changed through the other name)", () => {
    fs.linkSync(path.join(source, "worker.mjs"), path.join(base, `hard-${n}`));
    expect(thrownBy(() => readBundleDir(source)).message).toContain("2 links");
  });
});
