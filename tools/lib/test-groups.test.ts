import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hasSerialMarker, markedSerialFiles, serialGlobs, SERIAL_FOLDERS } from "./test-groups.mjs";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("vitest's serial group (tools/lib/test-groups.mjs)", () => {
  it("the marker counts only in a comment near the top of a file", () => {
    expect(hasSerialMarker("/**\n * Launches sandboxes.\n * test-group: serial — loop devices\n */\nimport x from 'y';")).toBe(true);
    expect(hasSerialMarker("// test-group: serial (cgroups)\nimport x from 'y';")).toBe(true);
    expect(hasSerialMarker("const s = 'test-group: serial';")).toBe(false);
    expect(hasSerialMarker(`${"// filler\n".repeat(60)}// test-group: serial\n`)).toBe(false);
  });

  it("a marked file outside the serial folders joins the group; an unmarked one and one inside a serial folder are not listed twice", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "lh-groups-"));
    try {
      const write = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), text);
      };
      write("server/a/guest.test.ts", "// test-group: serial — starts a guest\n");
      write("server/a/pure.test.ts", "import x from 'y';\n");
      write("native/test/launch.test.ts", "// test-group: serial\n");
      write("node_modules/pkg/server/x.test.ts", "// test-group: serial\n");
      expect(markedSerialFiles(root)).toEqual(["server/a/guest.test.ts"]);
      expect(serialGlobs(root)).toEqual([...SERIAL_FOLDERS.map((f) => `${f}**/*.test.ts`), "server/a/guest.test.ts"]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("in this checkout every marked file exists and says why (text after the marker)", () => {
    for (const rel of markedSerialFiles(ROOT)) {
      const head = fs.readFileSync(path.join(ROOT, rel), "utf8").split("\n", 40).join("\n");
      expect(head, rel).toMatch(/test-group: serial\b\s*\S+/);
    }
  });
});
