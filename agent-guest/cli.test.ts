import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { guestMain, requireRoot } from "./cli";
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
      [["enrol", "--hub", "http://h", "--code"], /^leasehold-guest enrol: --code needs a value/],
      [["enrol", "--hub", "not a url", "--code", "c", "--state-dir", stateDir()], /^leasehold-guest enrol: --hub "not a url" is not a URL/],
      [["enrol", "--hub", "ftp://h", "--code", "c", "--state-dir", stateDir()], /--hub must be an http\(s\) URL/],
      [["run", "--bogus", "1"], /^leasehold-guest run: unknown option --bogus/],
      [["run", "--enrol-code", "c", "--state-dir", stateDir()], /--hub is required: --enrol-code enrols with that hub/],
      [["run", "extra"], /unexpected argument "extra"/],
      [["frob"], /unknown command "frob"/],
    ];
    for (const [argv, message] of cases) {
      errors = [];
      expect(await guestMain(argv), argv.join(" ")).toBe(2);
      expect(errors.join("\n"), argv.join(" ")).toMatch(message);
    }
  });

  it("an unreachable hub is named with the reason, exit 1, and nothing is enrolled", async () => {
    const dir = stateDir();
    const hub = `http://127.0.0.1:${await closedPort()}`;
    expect(await guestMain(["enrol", "--hub", hub, "--code", "lhe_x", "--state-dir", dir])).toBe(1);
    expect(errors.join("\n")).toMatch(new RegExp(`cannot reach the hub at ${hub.replaceAll(".", "\\.")}: ECONNREFUSED; nothing was enrolled`));
    expect(fs.existsSync(path.join(dir, "enrolment.json"))).toBe(false);
  });

  it("a state directory already enrolled is not enrolled again (one directory, one host)", async () => {
    const dir = stateDir();
    ensureStateDir(dir);
    saveEnrolment(dir, { hub: "http://hub.test", host_id: "6f1c1c1e-0000-4000-8000-000000000001", name: "web-1", job_key: "k", log_key: "l" });
    expect(await guestMain(["enrol", "--hub", "http://127.0.0.1:1", "--code", "lhe_x", "--state-dir", dir])).toBe(1);
    expect(errors.join("\n")).toMatch(/already enrolled as host "web-1"/);
  });

  it("refuses to run or enrol as anyone but root, naming the uid", () => {
    expect(() => requireRoot(1000)).toThrow(/must run as root .*running as uid 1000/);
    expect(() => requireRoot(null)).toThrow(/running as uid unknown/);
    expect(() => requireRoot(0)).not.toThrow();
  });
});
