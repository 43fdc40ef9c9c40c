import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type * as BenchReport from "./bench-report";

type Module = typeof BenchReport;

// A fresh module per test: the "reports this process wrote" memory is module state.
async function load(): Promise<Module> {
  vi.resetModules();
  return import("./bench-report");
}

describe("reportBench (tools/lib/bench-report.ts)", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "leasehold-bench-report-"));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("writes nothing and prints nothing when LEASEHOLD_BENCH_JSON is unset or empty", async () => {
    const log = vi.spyOn(console, "log");
    const err = vi.spyOn(console, "error");
    const write = vi.spyOn(process.stdout, "write");
    for (const value of [undefined, ""]) {
      if (value === undefined) delete process.env.LEASEHOLD_BENCH_JSON;
      else vi.stubEnv("LEASEHOLD_BENCH_JSON", value);
      const { reportBench } = await load();
      reportBench("x", {}, [{ name: "a", value: 1, unit: "ms" }]);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(log).not.toHaveBeenCalled();
    expect(err).not.toHaveBeenCalled();
    expect(write).not.toHaveBeenCalled();
    vi.restoreAllMocks();
  });

  it("writes one report as one JSON object with bench, meta, figures and an ISO time", async () => {
    const file = path.join(dir, "nested", "one.json");
    vi.stubEnv("LEASEHOLD_BENCH_JSON", file);
    const { reportBench } = await load();
    const before = Date.now();
    reportBench("launch", { n: 3 }, [{ name: "sandbox p50", value: 4.2, unit: "ms", baseline: "fork+exec p50", ratio: 3.5, goal: "≤ 5×" }]);
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(Array.isArray(parsed)).toBe(false);
    expect(parsed).toMatchObject({ bench: "launch", meta: { n: 3 }, figures: [{ name: "sandbox p50", value: 4.2, unit: "ms", baseline: "fork+exec p50", ratio: 3.5, goal: "≤ 5×" }] });
    expect(Object.keys(parsed).sort()).toEqual(["at", "bench", "figures", "meta"]);
    const at = Date.parse(parsed.at as string);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(at).toISOString()).toBe(parsed.at);
  });

  it("a second and third report from the same process land beside the first as a JSON array, in order", async () => {
    const file = path.join(dir, "many.json");
    vi.stubEnv("LEASEHOLD_BENCH_JSON", file);
    const { reportBench } = await load();
    reportBench("mcp", { clients: 1 }, [{ name: "a", value: 1, unit: "ms" }]);
    reportBench("mcp", { clients: 16 }, [{ name: "b", value: 2, unit: "ms" }]);
    reportBench("mcp", { clients: 64 }, [{ name: "c", value: 3, unit: "ms" }]);
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as Array<{ meta: { clients: number }; figures: Array<{ name: string }> }>;
    expect(parsed.map((r) => [r.meta.clients, r.figures[0]!.name])).toEqual([[1, "a"], [16, "b"], [64, "c"]]);
    expect(fs.readdirSync(dir)).toEqual(["many.json"]);
  });

  it("replaces a file left by an earlier process instead of appending to it", async () => {
    const file = path.join(dir, "stale.json");
    fs.writeFileSync(file, JSON.stringify({ bench: "old", meta: {}, figures: [], at: "2020-01-01T00:00:00.000Z" }));
    vi.stubEnv("LEASEHOLD_BENCH_JSON", file);
    const { reportBench } = await load();
    reportBench("new", {}, []);
    expect((JSON.parse(fs.readFileSync(file, "utf8")) as { bench: string }).bench).toBe("new");
  });

  it("refuses a non-finite figure or a ratio without a named baseline, and writes nothing", async () => {
    const file = path.join(dir, "bad.json");
    vi.stubEnv("LEASEHOLD_BENCH_JSON", file);
    const { reportBench } = await load();
    expect(() => reportBench("b", {}, [{ name: "p50", value: NaN, unit: "ms" }])).toThrow(/non-finite value/);
    expect(() => reportBench("b", {}, [{ name: "p50", value: 1, unit: "ms", baseline: "x", ratio: Infinity }])).toThrow(/non-finite ratio/);
    expect(() => reportBench("b", {}, [{ name: "p50", value: 1, unit: "ms", ratio: 2 }])).toThrow(/names no baseline/);
    expect(fs.existsSync(file)).toBe(false);
  });
});
