/**
 * apk_inspect on a ~1 MB and a ~50 MB APK (real aapt APKs, v2/v3-signed,
 * agent-guest/workers/apk-static/bench/large-apk.ts), measured in one run:
 *
 *   worker only   the shipped bundle (dist/workers/apk-static) on stdin of
 *                 `node --input-type=module - apk_inspect FILE`, no sandbox,
 *                 time and peak RSS from GNU time — the baseline
 *   upload        artifact_upload in 2 MiB chunks through the SDK's client
 *   end to end    apk_inspect {sha256} through the SDK's client → hub pipeline
 *                 → local guest → artifact fetched from the hub in 4 MiB
 *                 ranges and re-hashed → verified bundle → sandbox → scrubbed
 *                 JSON → signed evidence → sealed → result
 *
 * and the peak resident memory (VmHWM) of the hub and guest processes after
 * each size. The ratio printed is end to end ÷ worker only (same file, same run).
 *
 * Needs root and the built hub (`node tools/build.mjs`). Embedded PGlite
 * unless DATABASE_URL is set.
 *   npx tsx agent-guest/bench/apk-e2e.bench.ts      (BENCH_APK_MB=1,50: the sizes)
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { makeApk } from "../workers/apk-static/bench/large-apk";
import { apkFixtures, ensureAndroidTools } from "../workers/apk-static/test/fixtures";
import { ROOT, runCli, startHub } from "../../test/support/hub-process";
import { connectClient } from "../../test/mcp/support";
import { waitFor } from "../../test/guest/support";
import { reportBench, type BenchFigure } from "../../tools/lib/bench-report";

const CHUNK = 2 * 1024 * 1024;
const RUNS = 3;
/** APK sizes in MB; BENCH_APK_MB=1 for a quick run (npm run bench -- --quick). */
const SIZES = (process.env.BENCH_APK_MB ?? "1,50").split(",").map(Number);
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const structured = (r: unknown) => ((r as CallToolResult).structuredContent ?? {}) as Record<string, unknown>;

function workerOnly(bundle: Buffer, apk: string): { ms: number; rssMiB: number } {
  const r = spawnSync("/usr/bin/time", ["-f", "LEASEHOLD_TIME %e %M", process.execPath, "--input-type=module", "-", "apk_inspect", apk], { input: bundle, maxBuffer: 64 << 20 });
  const m = /LEASEHOLD_TIME ([\d.]+) (\d+)/.exec(r.stderr.toString());
  if (r.status !== 0 || m === null) throw new Error(`worker failed on ${apk}: ${r.stderr.toString().slice(0, 400)}`);
  return { ms: Number(m[1]) * 1000, rssMiB: Number(m[2]) / 1024 };
}

function vmHwmMiB(pid: string | number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Peak resident set (VmHWM) of the hub process and of its local guest (whose command line names the hub's data directory). */
function peaks(hubPid: number, dataDir: string): { hub: number; guest: number } {
  let guest = 0;
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let cmd: string;
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue;
    }
    if (cmd.includes("leasehold-guest") && cmd.includes(dataDir)) guest = Math.max(guest, vmHwmMiB(pid));
  }
  return { hub: vmHwmMiB(hubPid), guest };
}

async function upload(client: Client, bytes: Buffer): Promise<{ sha256: string; ms: number }> {
  const whole = { sha256: sha256(bytes), bytes: bytes.length };
  const t = performance.now();
  for (let offset = 0; offset < bytes.length; offset += CHUNK) {
    const piece = bytes.subarray(offset, offset + CHUNK);
    const r = (await client.callTool({ name: "artifact_upload", arguments: { ...whole, offset, chunk: piece.toString("base64"), chunk_sha256: sha256(piece) } }, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult;
    if (r.isError === true) throw new Error(`upload failed: ${JSON.stringify(r.structuredContent)}`);
  }
  return { sha256: whole.sha256, ms: performance.now() - t };
}

async function inspect(client: Client, sha: string): Promise<{ ms: number; facts: number }> {
  const t = performance.now();
  let s = structured(await client.callTool({ name: "apk_inspect", arguments: { host: "local", artifact: { sha256: sha } } }, CallToolResultSchema, { timeout: 300_000 }));
  while (s["status"] === "dispatched") s = structured(await client.callTool({ name: "approval_wait", arguments: { action_id: s["action_id"] } }, CallToolResultSchema, { timeout: 300_000 }));
  const facts = ((s["result"] as { structured?: { facts?: unknown[] } } | undefined)?.structured?.facts ?? []).length;
  if (s["status"] !== "completed" || facts === 0) throw new Error(`apk_inspect did not complete: ${JSON.stringify(s).slice(0, 600)}`);
  return { ms: performance.now() - t, facts };
}

async function main(): Promise<void> {
  ensureAndroidTools();
  spawnSync(process.execPath, ["--input-type=module", "-e", `import(${JSON.stringify(path.join(ROOT, "tools/lib/apt.mjs"))}).then((m) => m.ensureDebianPackages(["time"], { quiet: true }))`], { stdio: "inherit" });
  const fixtures = await apkFixtures();
  const keystore = path.join(path.dirname(fixtures.minimal), "signing.p12");
  const bundle = fs.readFileSync(path.join(ROOT, "dist", "workers", "apk-static", "worker.mjs"));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "apk-e2e-bench-"));
  const databaseUrl = process.env["DATABASE_URL"];
  const hub = await startHub({ DATABASE_URL: databaseUrl, LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000", LEASEHOLD_MCP_APPROVAL_WAIT_S: "60" }, 120_000);
  try {
    const cli = { LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port), ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
    const token = await runCli(["token", "create", "--name", "apk-bench", "--read-only", "--expires", "1h"], cli);
    const secret = token.stdout.split("\n").find((line) => line.startsWith("lh_"));
    if (token.code !== 0 || secret === undefined) throw new Error(`token create failed: ${token.stderr}${token.stdout}`);
    const { client } = await connectClient(hub.url, secret);
    await waitFor(
      "apk-static ready on host local",
      async () => {
        const listing = structured(await client.callTool({ name: "list_capabilities", arguments: {} }, CallToolResultSchema)) as { capabilities?: Array<{ id: string; readiness?: { state: string } }> };
        return listing.capabilities?.find((c) => c.id === "apk-static")?.readiness?.state === "ready" ? true : undefined;
      },
      90_000,
      500,
    );
    const rows: string[][] = [];
    const figures: BenchFigure[] = [];
    for (const mb of SIZES) {
      const file = makeApk(work, mb, keystore);
      const bytes = fs.readFileSync(file);
      const worker = Array.from({ length: RUNS }, () => workerOnly(bundle, file));
      const up = await upload(client, bytes);
      const e2e: { ms: number; facts: number }[] = [];
      for (let i = 0; i < RUNS; i += 1) e2e.push(await inspect(client, up.sha256));
      const p = peaks(hub.process.pid ?? 0, hub.dataDir);
      const w = median(worker.map((x) => x.ms));
      const e = median(e2e.map((x) => x.ms));
      rows.push([
        `${(bytes.length / 1024 / 1024).toFixed(1)} MB`,
        w.toFixed(0),
        Math.max(...worker.map((x) => x.rssMiB)).toFixed(1),
        up.ms.toFixed(0),
        ((bytes.length / 1024 / 1024) / (up.ms / 1000)).toFixed(1),
        e.toFixed(0),
        (e / w).toFixed(2),
        String(e2e[0]!.facts),
        p.hub.toFixed(0),
        p.guest.toFixed(0),
      ]);
      const size = `${(bytes.length / 1024 / 1024).toFixed(1)} MB`;
      figures.push(
        { name: `apk_inspect end to end, ${size}`, value: e, unit: "ms", baseline: `worker only (bundle on stdin, no sandbox), ${size}`, ratio: e / w },
        { name: `worker only, ${size}`, value: w, unit: "ms" },
        { name: `upload, ${size}`, value: (bytes.length / 1024 / 1024) / (up.ms / 1000), unit: "MiB/s" },
        { name: `hub VmHWM after ${size}`, value: p.hub, unit: "MiB" },
        { name: `guest VmHWM after ${size}`, value: p.guest, unit: "MiB" },
      );
    }
    await client.close();
    const head = ["APK", "worker only ms (median)", "worker peak RSS MiB", "upload ms (2 MiB chunks)", "upload MiB/s", "end to end ms (median)", "e2e ÷ worker", "facts", "hub VmHWM MiB", "guest VmHWM MiB"];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join(" | ");
    console.log(`apk_inspect, ${databaseUrl ? "PostgreSQL" : "PGlite"}, ${RUNS} runs each, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}`);
    console.log(fmt(head));
    console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
    for (const r of rows) console.log(fmt(r));
    reportBench("apk-e2e", { database: databaseUrl ? "postgres" : "pglite", runs: RUNS, sizes_mb: SIZES, cpus: os.cpus().length, load: os.loadavg()[0] }, figures);
  } finally {
    await hub.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

await main();
