import { generateKeyPairSync } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testShellPolicy, testVerifiedJob } from "../../test/support/shell-policy";
import { parseCeiling, type HostCeiling } from "../ceiling/index";
import { resolveEgressNames, type Lookup } from "../egress/index";
import type { CompiledSandboxPolicy } from "../../server/capabilities";
import { runJob, sandboxPolicyFor, type RunnerContext } from "./runner";
import type { VerifiedJob } from "./verify-job";

/**
 * run_command_net on the guest up to the launch: the ceiling and the tier
 * are checked before any name is looked up, a name that does not resolve
 * fails the job with EGRESS_NAME_UNRESOLVED and a signed refusal, and the
 * sandbox policy carries the resolved addresses and the names for its
 * /etc/hosts. (The launch itself, on tier B, is test/egress/.)
 */

let base: string;
let ceiling: HostCeiling;

function netJob(egress: string[]): VerifiedJob {
  const policy = { ...testShellPolicy({ mode: "egress", egress }), capability: "egress-shell", operation: "run_command_net", requires: { min_tier: "B", kernel_features: [] } } as unknown as CompiledSandboxPolicy;
  return testVerifiedJob({
    operation: "run_command_net",
    capability: { id: "egress-shell", version: "1.0.0" },
    mutating: true,
    arguments: { host: "local", command: "getent hosts api.example.test", cwd: ".", env: {}, stdin: "" },
    policy,
  });
}

function context(tier: RunnerContext["tier"], lookup: Lookup): RunnerContext {
  return { hostId: "h", hostKey: generateKeyPairSync("ed25519").privateKey, ceiling, tier, workerDigest: `sha256:${"2".repeat(64)}`, lookup, resolveTimeoutMs: 500 };
}

function recording(table: Record<string, string[]>): { lookup: Lookup; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    lookup: async (name) => {
      calls.push(name);
      const found = table[name];
      if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
      return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    },
  };
}

beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-runner-egress-"));
  fs.mkdirSync(path.join(base, "ws"));
  ceiling = parseCeiling({
    version: 1,
    workspace_root: path.join(base, "ws"),
    exec_dirs: ["/bin", "/usr/bin"],
    egress: ["api.example.test:443", "10.0.0.0/8:443"],
    max: { memory_bytes: 1 << 30, cpus: 2, pids: 512, timeout_ms: 3600_000, output_bytes: 8 << 20, tmpfs_bytes: 256 << 20, tmpfs_inodes: 65_536 },
  });
});

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe("run_command_net before the launch", () => {
  it("tier C: UNENFORCEABLE, no name looked up, nothing launched, a signed refusal", async () => {
    const { lookup, calls } = recording({ "api.example.test": ["203.0.113.7"] });
    let launched = false;
    const out = await runJob(netJob(["api.example.test:443"]), context("C", lookup), { onLaunch: () => (launched = true) });
    expect(out.kind).toBe("refused");
    expect(out.error?.code).toBe("UNENFORCEABLE");
    expect(calls).toEqual([]);
    expect(launched).toBe(false);
    expect(out.evidence.envelope.limitations[0]).toMatch(/^not launched: UNENFORCEABLE/);
  });

  it("a name that does not resolve: EGRESS_NAME_UNRESOLVED naming it, nothing launched", async () => {
    const { lookup, calls } = recording({});
    let launched = false;
    const out = await runJob(netJob(["api.example.test:443"]), context("B", lookup), { onLaunch: () => (launched = true) });
    expect(calls).toEqual(["api.example.test"]);
    expect(out.kind).toBe("refused");
    expect(out.error?.code).toBe("EGRESS_NAME_UNRESOLVED");
    expect(out.error?.message).toContain("api.example.test");
    expect(launched).toBe(false);
  });

  it("a name the ceiling does not name, resolving outside its address rules: POLICY_REFUSED, nothing launched", async () => {
    const { lookup } = recording({ "other.example.test": ["198.51.100.9"] });
    let launched = false;
    const out = await runJob(netJob(["other.example.test:443"]), context("B", lookup), { onLaunch: () => (launched = true) });
    expect(out.error?.code).toBe("POLICY_REFUSED");
    expect(out.error?.message).toContain("198.51.100.9");
    expect(launched).toBe(false);
  });

  it("a name on a port the ceiling has no rule for is refused before any lookup", async () => {
    const { lookup, calls } = recording({ "api.example.test": ["203.0.113.7"] });
    const out = await runJob(netJob(["api.example.test:80"]), context("B", lookup));
    expect(out.error?.code).toBe("POLICY_REFUSED");
    expect(calls).toEqual([]);
  });

  it("the sandbox policy carries exactly the resolved addresses on the rule's port and the names for /etc/hosts", async () => {
    const { lookup } = recording({ "api.example.test": ["203.0.113.7", "2001:db8::7"] });
    const job = netJob(["10.1.0.0/16:443", "api.example.test:443"]);
    const resolution = await resolveEgressNames(["10.1.0.0/16:443", "api.example.test:443"], { lookup });
    const policy = sandboxPolicyFor(job, context("B", lookup), resolution);
    expect(policy.network).toEqual({
      egress: ["10.1.0.0/16:443", "203.0.113.7/32:443", "[2001:db8::7/128]:443"],
      hosts: [{ name: "api.example.test", addresses: ["2001:db8::7", "203.0.113.7"] }],
    });
    // Without a resolution a list with names cannot become a sandbox policy.
    expect(() => sandboxPolicyFor(job, context("B", lookup))).toThrow(/not resolved/);
    expect(sandboxPolicyFor(netJob(["10.1.0.0/16:443"]), context("B", lookup)).network).toEqual({ egress: ["10.1.0.0/16:443"] });
  });
});
