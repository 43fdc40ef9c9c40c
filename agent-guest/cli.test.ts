import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { guestMain, readCodeFromStdin, requireRoot } from "./cli";
import { ensureStateDir, saveEnrolment } from "./daemon/state";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "lh-guest-cli-"));
  dirs.push(d);
  return path.join(d, "state");
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let errors: string[];
beforeEach(() => {
  errors = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
  vi.spyOn(console, "log").mockImplementation(() => undefined);
});
afterEach(() => vi.restoreAllMocks());

describe("leasehold-guest command line", () => {
  it("usage mistakes exit 2 with one line naming the problem (and the usage)", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["enrol"], /^leasehold-guest enrol: --hub is required/],
      [["enrol", "--hub", "not a url", "--state-dir", stateDir()], /^leasehold-guest enrol: --hub "not a url" is not a URL/],
      [["enrol", "--hub", "ftp://h", "--state-dir", stateDir()], /--hub must be an http\(s\) URL/],
      [["run", "--bogus", "1"], /^leasehold-guest run: unknown option --bogus/],
      [["run", "--enrol-stdin", "--state-dir", stateDir()], /--hub is required: --enrol-stdin enrols with that hub/],
      [["run", "extra"], /unexpected argument "extra"/],
      [["frob"], /unknown command "frob"/],
    ];
    for (const [argv, message] of cases) {
      errors = [];
      expect(await guestMain(argv, { env: { LEASEHOLD_ENROL_CODE: "lhe_x" }, stdin: () => "lhe_x" }), argv.join(" ")).toBe(2);
      expect(errors.join("\n"), argv.join(" ")).toMatch(message);
    }
  });

  it("an enrolment code in argv is refused with how to pass it now (--code, --enrol-code), and nothing is enrolled", async () => {
    const dir = stateDir();
    for (const argv of [["enrol", "--hub", "http://127.0.0.1:1", "--code", "lhe_x", "--state-dir", dir], ["run", "--hub", "http://127.0.0.1:1", "--enrol-code", "lhe_x", "--state-dir", dir]]) {
      errors = [];
      expect(await guestMain(argv, { env: {}, stdin: () => "" }), argv.join(" ")).toBe(2);
      expect(errors[0], argv.join(" ")).toMatch(/^leasehold-guest (enrol|run): --(enrol-)?code is refused: a code on the command line is readable by every local user \(\/proc\/PID\/cmdline\); pass it in LEASEHOLD_ENROL_CODE or on stdin$/m);
    }
    expect(fs.existsSync(path.join(dir, "enrolment.json"))).toBe(false);
  });

  it("enrol reads the code from LEASEHOLD_ENROL_CODE, else from stdin, and refuses an empty one", async () => {
    const seen: string[] = [];
    const hub = `http://127.0.0.1:${await closedPort()}`;
    // The code reaches the enrolment (which then fails to reach the closed port, exit 1).
    expect(await guestMain(["enrol", "--hub", hub, "--state-dir", stateDir()], { env: { LEASEHOLD_ENROL_CODE: "lhe_env" }, stdin: () => (seen.push("stdin"), "lhe_stdin") })).toBe(1);
    expect(seen).toEqual([]);
    expect(await guestMain(["enrol", "--hub", hub, "--state-dir", stateDir()], { env: {}, stdin: () => (seen.push("stdin"), "lhe_stdin") })).toBe(1);
    expect(seen).toEqual(["stdin"]);
    errors = [];
    expect(await guestMain(["enrol", "--hub", hub, "--state-dir", stateDir()], { env: {}, stdin: () => "" })).toBe(2);
    expect(errors.join("\n")).toMatch(/no enrolment code: set LEASEHOLD_ENROL_CODE or pass it on stdin/);
  });

  it("readCodeFromStdin takes the first line of a pipe", () => {
    const file = path.join(stateDir(), "code");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "lhe_abc\nrest\n");
    const fd = fs.openSync(file, "r");
    try {
      expect(readCodeFromStdin(fd)).toBe("lhe_abc");
    } finally {
      fs.closeSync(fd);
    }
  });

  it("an unreachable hub is named with the reason, exit 1, and nothing is enrolled", async () => {
    const dir = stateDir();
    const hub = `http://127.0.0.1:${await closedPort()}`;
    expect(await guestMain(["enrol", "--hub", hub, "--state-dir", dir], { env: { LEASEHOLD_ENROL_CODE: "lhe_x" } })).toBe(1);
    expect(errors.join("\n")).toMatch(new RegExp(`cannot reach the hub at ${hub.replaceAll(".", "\\.")}: ECONNREFUSED; nothing was enrolled`));
    expect(fs.existsSync(path.join(dir, "enrolment.json"))).toBe(false);
  });

  it("a state directory already enrolled is not enrolled again (one directory, one host)", async () => {
    const dir = stateDir();
    ensureStateDir(dir);
    saveEnrolment(dir, { hub: "http://hub.test", host_id: "6f1c1c1e-0000-4000-8000-000000000001", name: "web-1", job_key: "k", log_key: "l" });
    expect(await guestMain(["enrol", "--hub", "http://127.0.0.1:1", "--state-dir", dir], { env: { LEASEHOLD_ENROL_CODE: "lhe_x" } })).toBe(1);
    expect(errors.join("\n")).toMatch(/already enrolled as host "web-1"/);
  });

  it("refuses to run or enrol as anyone but root, naming the uid", () => {
    expect(() => requireRoot(1000)).toThrow(/must run as root .*running as uid 1000/);
    expect(() => requireRoot(null)).toThrow(/running as uid unknown/);
    expect(() => requireRoot(0)).not.toThrow();
  });
});
