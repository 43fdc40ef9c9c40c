import { describe, expect, it } from "vitest";
import { busyShare, machineCpu, processCpu, readCpuLog } from "./cpu-use.mjs";

describe("npm test's CPU figures", () => {
  it("reads /proc/stat's first line: idle and iowait are not busy, steal is", () => {
    const a = machineCpu("cpu  100 10 50 800 40 0 5 5 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n");
    expect(a).toEqual({ busy: 170, total: 1010 });
    const b = machineCpu("cpu  200 10 90 900 40 0 5 15 0 0\n");
    // 150 busy ticks of 250: 60%
    expect(busyShare(a, b)).toBeCloseTo(0.6, 5);
    expect(() => machineCpu("intr 1 2 3\n")).toThrow(/unexpected first line/);
  });

  it("reads a process's own and its waited-for children's CPU, with a command name holding spaces and parentheses", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    // fields 14..17 (utime, stime, cutime, cstime) in ticks
    fields[14 - 3] = "250";
    fields[15 - 3] = "50";
    fields[16 - 3] = "1000";
    fields[17 - 3] = "200";
    expect(processCpu(`4242 (node (worker) x) ${fields.join(" ")}\n`)).toEqual({ self: 3, children: 12 });
    const real = processCpu();
    expect(real.self).toBeGreaterThanOrEqual(0);
    expect(real.children).toBeGreaterThanOrEqual(0);
  });

  it("ranks a CPU log's files and counts a half-written line instead of failing on it", () => {
    const log = [
      JSON.stringify({ file: "a.test.ts", self: 1, children: 0 }),
      JSON.stringify({ file: "b.test.ts", self: 0.5, children: 4 }),
      JSON.stringify({ file: "c.test.ts", self: 2, children: 0.5 }),
      '{"file":"d.test.ts","se',
      "",
    ].join("\n");
    const read = readCpuLog(log, 2);
    expect(read.files).toBe(3);
    expect(read.unreadable).toBe(1);
    expect(read.total).toBeCloseTo(8, 5);
    expect(read.top.map((f) => f.file)).toEqual(["b.test.ts", "c.test.ts"]);
  });
});
