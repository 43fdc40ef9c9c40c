import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CEILING_PATH } from "../../agent-guest/cli";
import { parseCeiling } from "../../agent-guest/ceiling";
import { HOST_CEILING_PATH, ceilingTemplate, enrolSteps } from "./enrol-steps";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const CODE = "lhe_abc123";

describe("the enrol panel's steps for a fresh host", () => {
  it("names an executable that exists in the checkout, for both enrol and run, and the ceiling path the guest reads by default", () => {
    const steps = enrolSteps("https://hub.example.test", CODE);
    const enrol = steps.find((s) => / enrol --hub /.test(s.command));
    const run = steps.find((s) => / run --ceiling /.test(s.command));
    expect(enrol?.command).toBe(`printf '%s\\n' '${CODE}' | node bin/leasehold-guest.mjs enrol --hub https://hub.example.test`);
    expect(run?.command).toBe(`node bin/leasehold-guest.mjs run --ceiling ${HOST_CEILING_PATH}`);
    expect(fs.existsSync(path.join(ROOT, "bin", "leasehold-guest.mjs"))).toBe(true);
    expect(HOST_CEILING_PATH).toBe(DEFAULT_CEILING_PATH);
    // The code never sits in the guest's argv: only printf (a shell builtin) holds it.
    expect(steps.filter((s) => s.command.includes(CODE)).map((s) => s.command.split("|")[1]).join("")).not.toContain(CODE);
  });

  it("writes, through the shell, a ceiling file the guest's own parser accepts", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-ceiling-"));
    try {
      const write = enrolSteps("https://hub.example.test", CODE).find((s) => s.command.includes("<<'CEILING'"));
      if (write === undefined) throw new Error("no ceiling step");
      execFileSync("bash", ["-c", write.command.replaceAll("/etc/leasehold", dir)]);
      const written = fs.readFileSync(path.join(dir, "ceiling.json"), "utf8");
      expect(written).toBe(ceilingTemplate());
      const ceiling = parseCeiling(JSON.parse(written));
      expect(ceiling.egress).toEqual([]);
      expect(ceiling.exec_dirs).toEqual(["/bin", "/sbin", "/usr/bin", "/usr/sbin"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
