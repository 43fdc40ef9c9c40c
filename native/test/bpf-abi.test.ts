// One layout, three readers: the structs of bpf/lease_abi.h and the records
// of bpf_guard.h as gcc lays them out (a C program built from the same
// headers), as TypeScript declares them (native/bpf-abi.ts) and as the BPF
// objects were compiled (their BTF) — plus the addon's own sizeof and the
// digest bpfStatus() reports for the object that enforces.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { BPF_BUILD_DIR } from "../../bpf/build.mjs";
import { BPF_ABI } from "../bpf-abi";
import { bpfAbiSizes, bpfStatus } from "../index";
import { setupNative } from "./helpers";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
type Layout = Map<string, { size: number; fields: Map<string, { offset: number; size: number }> }>;

/** What gcc makes of the headers, for every struct and field TypeScript names. */
function cLayout(): Layout {
  const lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "lease_abi.h"', '#include "bpf_guard.h"', "int main(void) {"];
  for (const [name, s] of Object.entries(BPF_ABI)) {
    lines.push(`  printf("S ${name} %zu\\n", sizeof(struct ${name}));`);
    for (const f of Object.keys(s.fields))
      lines.push(`  printf("F ${name} ${f} %zu %zu\\n", offsetof(struct ${name}, ${f}), sizeof(((struct ${name} *)0)->${f}));`);
  }
  lines.push("  return 0;", "}");
  const dir = mkdtempSync(join(tmpdir(), "lh-abi-"));
  try {
    writeFileSync(join(dir, "abi.c"), lines.join("\n"));
    execFileSync("gcc", ["-std=gnu11", "-Wall", "-Werror", "-I", join(repo, "bpf"), "-I", join(repo, "native", "src"), "-o", join(dir, "abi"), join(dir, "abi.c")]);
    const out = execFileSync(join(dir, "abi"), { encoding: "utf8" });
    const m: Layout = new Map();
    for (const l of out.trim().split("\n")) {
      const p = l.split(" ");
      if (p[0] === "S") m.set(p[1]!, { size: Number(p[2]), fields: new Map() });
      else m.get(p[1]!)!.fields.set(p[2]!, { offset: Number(p[3]), size: Number(p[4]) });
    }
    return m;
  } finally { rmSync(dir, { recursive: true, force: true }); }
}

/** The lh_* structs in a BPF object's BTF: size and members (name, byte offset) in order. */
function btfLayout(obj: string): Map<string, { size: number; members: [string, number][] }> {
  const raw = execFileSync("bpftool", ["btf", "dump", "file", obj, "format", "raw"], { encoding: "utf8", maxBuffer: 64 << 20 });
  const m = new Map<string, { size: number; members: [string, number][] }>();
  let cur: { size: number; members: [string, number][] } | null = null;
  for (const line of raw.split("\n")) {
    const s = /^\[\d+\] STRUCT '(lh_[a-z_0-9]+)' size=(\d+) vlen=\d+/.exec(line);
    if (s) { cur = { size: Number(s[2]), members: [] }; m.set(s[1]!, cur); continue; }
    const f = /^\s+'([^']+)' type_id=\d+ bits_offset=(\d+)/.exec(line);
    if (f && cur) cur.members.push([f[1]!, Number(f[2]) / 8]);
    else if (!line.startsWith("\t")) cur = null;
  }
  return m;
}

const KERNEL_SIDE = ["lh_lease_value", "lh_file_key", "lh_egress_key", "lh_event"] as const;
const OBJECTS = ["lease_lsm", "lease_cgroup"];

beforeAll(() => setupNative());

describe("BPF lease ABI on every side", () => {
  it("gcc's layout of every shared struct equals native/bpf-abi.ts", () => {
    const c = cLayout();
    for (const [name, s] of Object.entries(BPF_ABI)) {
      const got = c.get(name)!;
      expect([name, got.size]).toEqual([name, s.size]);
      for (const [f, want] of Object.entries(s.fields)) expect([name, f, got.fields.get(f)]).toEqual([name, f, want]);
      // Every byte is a declared field: no hole (keys are compared byte by byte), nothing TS does not know.
      const covered = Object.values(s.fields).reduce((n, f) => n + f.size, 0);
      expect([name, covered]).toEqual([name, s.size]);
    }
  });

  for (const obj of OBJECTS) {
    it(`the BTF of ${obj}.bpf.o has the same structs, members and offsets`, () => {
      const btf = btfLayout(join(BPF_BUILD_DIR, `${obj}.bpf.o`));
      for (const name of KERNEL_SIDE) {
        const want = BPF_ABI[name];
        const got = btf.get(name);
        expect(got, `${name} missing from ${obj}'s BTF`).toBeDefined();
        expect([name, got!.size]).toEqual([name, want.size]);
        expect([name, got!.members]).toEqual([name, Object.entries(want.fields).map(([f, v]) => [f, v.offset])]);
      }
    });
  }

  it("the addon was compiled with the same record sizes", () => {
    expect(bpfAbiSizes()).toEqual({ rule: BPF_ABI.lh_bpf_rule.size, file: BPF_ABI.lh_bpf_file.size });
  });

  it("bpfStatus().object_sha256 is the SHA-256 of the object file that enforces the tier", () => {
    const st = bpfStatus();
    expect(st.tier, st.detail).toMatch(/^[AB]$/);
    const file = join(BPF_BUILD_DIR, st.tier === "A" ? "lease_lsm.bpf.o" : "lease_cgroup.bpf.o");
    expect(st.object_sha256).toBe(createHash("sha256").update(readFileSync(file)).digest("hex"));
  });
});
