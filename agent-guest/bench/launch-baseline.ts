/**
 * What both end-to-end benches print beside their figures: the sandbox
 * launch alone, measured in the same run, and one way to summarise samples.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch } from "../../native/index";

export function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
  return `p50 ${q(0.5).toFixed(1)} ms  p99 ${q(0.99).toFixed(1)} ms  (n=${s.length})`;
}

/** `n` launches of /bin/true in a throwaway workdir; milliseconds each. */
export async function measureBareLaunches(n: number): Promise<number[]> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "lh-bench-"));
  const bare: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const t = performance.now();
    await launch({ argv: ["/bin/true"], workdir: ws, memory_bytes: 512 << 20, cpus: 1, pids_max: 128, timeout_ms: 10_000 }, { chownWorkdir: false });
    bare.push(performance.now() - t);
  }
  fs.rmSync(ws, { recursive: true, force: true });
  return bare;
}

/** `n` launches of /bin/true, `inFlight` at a time: the launcher's own rate (launches/s) at that concurrency. */
export async function measureConcurrentLaunchRate(n: number, inFlight: number): Promise<number> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "lh-bench-"));
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        next += 1;
        await launch({ argv: ["/bin/true"], workdir: ws, memory_bytes: 512 << 20, cpus: 1, pids_max: 128, timeout_ms: 10_000 }, { chownWorkdir: false });
      }
    }),
  );
  const rate = (n / (performance.now() - t)) * 1000;
  fs.rmSync(ws, { recursive: true, force: true });
  return rate;
}
