/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * server side, the "active" suite) against /api/mcp of a real hub.
 *
 * The suite's scenarios cannot send an Authorization header, so they reach
 * the hub through test/mcp/conformance/bearer-proxy.ts, a loopback client
 * proxy that adds this run's bearer token (the hub's auth is unchanged; the
 * proxy's origin is put on the hub's Origin allow-list, as an operator would
 * for a browser client). The package is written for Node 22; on Node 20 it
 * runs with a small `fs.globSync` shim (conformance/node20-register.mjs).
 *
 * conformance-expected-failures.yaml lists the scenarios expected to fail,
 * each with the reason. The list may only shrink: this test fails on a
 * failure that is not listed AND on a listed scenario that now passes (the
 * suite's own `--expected-failures` baseline check, re-checked here from the
 * result files so the failure message names the scenarios).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../tools/lib/postgres.mjs";
import { ROOT, runProcess, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { startBearerProxy, type BearerProxy } from "./conformance/bearer-proxy";
import { createTokenViaCli } from "./support";

const EXPECTED_FAILURES = path.join(import.meta.dirname, "conformance-expected-failures.yaml");
const REGISTER = path.join(import.meta.dirname, "conformance", "node20-register.mjs");
const CONFORMANCE = path.join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const RUN_TIMEOUT_MS = 60_000;

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Scenario → its failing checks (FAILURE or WARNING count as a failed scenario, as in the suite's baseline check). */
function readResults(dir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name === "checks.json") {
        const checks = JSON.parse(fs.readFileSync(path.join(dir, child), "utf8")) as Check[];
        // Directory names are "<scenario>" or "server-<scenario>-<timestamp>"-like; the scenario is what the CLI printed.
        results.set(path.dirname(child), checks);
      }
    }
  };
  walk("");
  return results;
}

/** `server:` entries of the baseline file, each `- scenario  # reason`; an entry without a reason is an error. */
function readExpected(): Map<string, string> {
  const expected = new Map<string, string>();
  for (const line of fs.readFileSync(EXPECTED_FAILURES, "utf8").split("\n")) {
    const m = /^\s+-\s+([a-z0-9-]+)\s*(?:#\s*(.*))?$/.exec(line);
    if (m) expected.set(m[1] as string, (m[2] ?? "").trim());
  }
  return expected;
}

function runConformance(url: string, outDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runProcess(process.execPath, ["--import", REGISTER, CONFORMANCE, "server", "--url", url, "--expected-failures", EXPECTED_FAILURES, "-o", outDir], { timeoutMs: RUN_TIMEOUT_MS, label: "conformance" });
}

describe("official MCP conformance suite (server) against /api/mcp", () => {
  let hub: RunningHub;
  let proxy: BearerProxy;

  beforeAll(async () => {
    const proxyPort = await freePort();
    hub = await startHub({
      LEASEHOLD_LOCAL_GUEST: "0",
      LEASEHOLD_MCP_ALLOWED_ORIGINS: `http://127.0.0.1:${proxyPort}`,
      LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000",
    });
    const token = await createTokenViaCli({ url: hub.url, port: hub.port, dataDir: hub.dataDir }, ["--name", "conformance", "--expires", "1d"]);
    proxy = await startBearerProxy({ port: proxyPort, target: hub.url, token: token.secret });
  }, 120_000);

  afterAll(async () => {
    await proxy?.close();
    await hub?.stop();
  });

  it("every failure is listed in conformance-expected-failures.yaml with a reason, and every listed scenario still fails", async () => {
    const expected = readExpected();
    for (const [scenario, reason] of expected) expect(reason, `${scenario} needs a reason`).not.toBe("");

    const outDir = tempDir("lh-conformance-");
    const run = await runConformance(`${proxy.url}/api/mcp`, outDir);
    const results = readResults(outDir);
    // Result directories are named "server-<scenario>-<ISO timestamp>".
    const scenarioOf = (dir: string) => /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(path.basename(dir))?.[1] ?? dir;
    const failed = new Set<string>();
    const passed = new Set<string>();
    for (const [dir, checks] of results) {
      const scenario = scenarioOf(dir);
      if (checks.some((c) => c.status === "FAILURE" || c.status === "WARNING")) failed.add(scenario);
      else passed.add(scenario);
    }
    const checks = [...results.values()].flat();
    const count = (status: string) => checks.filter((c) => c.status === status).length;
    console.log(
      `conformance: ${results.size} scenarios, ${passed.size} passed, ${failed.size} failed (${[...failed].filter((s) => expected.has(s)).length} expected); ` +
        `checks: ${count("SUCCESS")} success, ${count("FAILURE")} failure, ${count("WARNING")} warning, ${count("INFO")} info; via proxy: ${proxy.requests} requests`,
    );

    expect(results.size, `no results were written:\n${run.stdout}\n${run.stderr}`).toBeGreaterThan(0);
    const unexpected = [...failed].filter((s) => !expected.has(s));
    const stale = [...expected.keys()].filter((s) => passed.has(s));
    const details = (s: string) =>
      `${s}: ${(results.get([...results.keys()].find((d) => scenarioOf(d) === s) ?? "") ?? [])
        .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
        .map((c) => `${c.id} ${c.errorMessage ?? ""}`)
        .join("; ")}`;
    expect(unexpected.map(details), "failures not in conformance-expected-failures.yaml").toEqual([]);
    expect(stale, "listed as expected failures but passing now: remove them from conformance-expected-failures.yaml").toEqual([]);
    // Every listed scenario ran (a renamed or dropped scenario must leave the list too).
    expect([...expected.keys()].filter((s) => !failed.has(s) && !passed.has(s)), "listed scenarios the suite no longer runs").toEqual([]);
    expect(run.code, run.stdout.slice(-3000)).toBe(0);
    expect(hub.process.exitCode).toBeNull();
  }, 90_000);
});
