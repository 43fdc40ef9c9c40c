import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ALLOWED_SKIPS } from "./skip-allowlist.mjs";
import { checkSkips, failureLines, readPlaywrightReport, readVitestReport, summarise, type Skip } from "./test-report.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const at = (file: string) => path.join(root, file);

// Shaped as vitest 4's json reporter wrote them in a recorded run (trimmed to the fields read).
const vitestReport = {
  testResults: [
    {
      name: at("tools/lib/test-seed.test.ts"), startTime: 1_000, endTime: 1_270.5, status: "passed",
      assertionResults: [
        { ancestorTitles: ["the shuffle seed (vitest.config.ts, tools/test.mjs)"], fullName: "the shuffle seed (vitest.config.ts, tools/test.mjs) LEASEHOLD_TEST_SEED names the seed", status: "passed", title: "LEASEHOLD_TEST_SEED names the seed" },
        { ancestorTitles: ["the shuffle seed (vitest.config.ts, tools/test.mjs)"], fullName: "the shuffle seed (vitest.config.ts, tools/test.mjs) npm test prints the seed with how to rerun it", status: "skipped", title: "npm test prints the seed with how to rerun it" },
      ],
    },
    {
      name: at("native/test/corpus.test.ts"), startTime: 2_000, endTime: 10_608, status: "passed",
      assertionResults: [
        { ancestorTitles: ["native corpus, then the host checks", "hostile corpus: kills, limits and escapes"], fullName: "native corpus, then the host checks hostile corpus: kills, limits and escapes arch check: kernel without IA32 emulation kills int 0x80 with SIGSEGV, in the lease as on the host (seccomp never sees it)", status: "skipped", title: "arch check: kernel without IA32 emulation kills int 0x80 with SIGSEGV, in the lease as on the host (seccomp never sees it)" },
      ],
    },
    {
      name: at("native/test/host-view.test.ts"), startTime: 11_000, endTime: 11_363, status: "passed",
      assertionResults: [
        { ancestorTitles: ["masked /proc entries show nothing of the host"], fullName: "masked /proc entries show nothing of the host /proc/kcore: host shows nothing (absent or unreadable on this kernel: row not tested), the lease shows 0", status: "skipped", title: "/proc/kcore: host shows nothing (absent or unreadable on this kernel: row not tested), the lease shows 0" },
        { ancestorTitles: ["masked /proc entries show nothing of the host"], fullName: "masked /proc entries show nothing of the host /proc/mtrr: host shows 0 (empty on this host: row not tested), the lease shows 0", status: "skipped", title: "/proc/mtrr: host shows 0 (empty on this host: row not tested), the lease shows 0" },
      ],
    },
  ],
};

// Shaped as Playwright 1.65's json reporter wrote it in a recorded run: one spec with a static test.skip, one skipped at run time with a reason.
const playwrightReport = {
  config: { rootDir: at("e2e") },
  suites: [
    {
      title: "console.spec.ts", file: "console.spec.ts",
      suites: [{
        title: "console", file: "console.spec.ts",
        specs: [
          { title: "runs", file: "console.spec.ts", tests: [{ projectName: "", status: "expected", annotations: [], results: [{ status: "passed", duration: 1_200, annotations: [] }] }] },
          { title: "an approval skipped on purpose", file: "console.spec.ts", tests: [{ projectName: "", status: "skipped", annotations: [{ type: "skip" }], results: [{ status: "skipped", duration: 0, annotations: [{ type: "skip" }] }] }] },
        ],
      }],
    },
    {
      title: "b.spec.ts", file: "b.spec.ts",
      specs: [
        { title: "b runs", file: "b.spec.ts", tests: [{ projectName: "", status: "flaky", annotations: [], results: [{ status: "failed", duration: 300 }, { status: "passed", duration: 200 }] }] },
        { title: "b skips at run time", file: "b.spec.ts", tests: [{ projectName: "", status: "skipped", annotations: [{ type: "skip", description: "no chromium here" }], results: [{ status: "skipped", duration: 36, annotations: [{ type: "skip", description: "no chromium here" }] }] }] },
      ],
    },
  ],
};

describe("npm test's report reading: slowest files and the skip allow-list", () => {
  it("a test skipped with it.skip fails the check, named with its file; kernel-feature skips pass with their reason", () => {
    const { lines, ok, unexplained, allowed } = summarise([readVitestReport(vitestReport, root)], {});
    expect(ok).toBe(false);
    expect(unexplained).toEqual([{ runner: "vitest", file: "tools/lib/test-seed.test.ts", name: "the shuffle seed (vitest.config.ts, tools/test.mjs) npm test prints the seed with how to rerun it" }]);
    expect(lines).toContain("SKIPPED WITHOUT AN ALLOWED REASON: tools/lib/test-seed.test.ts › the shuffle seed (vitest.config.ts, tools/test.mjs) npm test prints the seed with how to rerun it");
    expect(lines.at(-1)).toMatch(/^skip check FAILED: 1 test\(s\) skipped/);
    expect(allowed.map((s) => s.file)).toEqual(["native/test/corpus.test.ts", "native/test/host-view.test.ts", "native/test/host-view.test.ts"]);
  });

  it("without the stray skip the check passes", () => {
    const clean = { testResults: vitestReport.testResults.filter((r) => !r.name.endsWith("test-seed.test.ts")) };
    expect(summarise([readVitestReport(clean, root)], {}).ok).toBe(true);
  });

  it("the slowest files come first, at most ten, across both runners, with the total", () => {
    const files = Array.from({ length: 12 }, (_, i) => ({ name: at(`server/f${i}.test.ts`), startTime: 0, endTime: (i + 1) * 1000, assertionResults: [] }));
    const { lines } = summarise([readVitestReport({ testResults: files }, root), readPlaywrightReport(playwrightReport, root)], {});
    expect(lines[0]).toBe("10 slowest test files (of 14; 79.7 s in test files altogether):");
    expect(lines.slice(1, 11).map((l) => l.trim().split(/\s+/).at(-1))).toEqual(["server/f11.test.ts", "server/f10.test.ts", ...[9, 8, 7, 6, 5, 4, 3, 2].map((i) => `server/f${i}.test.ts`)]);
  });

  it("Playwright: files are repository paths, a file's time sums its attempts, a skip carries its reason", () => {
    const r = readPlaywrightReport(playwrightReport, root);
    expect(r.files).toEqual([{ runner: "playwright", file: "e2e/console.spec.ts", seconds: 1.2 }, { runner: "playwright", file: "e2e/b.spec.ts", seconds: 0.536 }]);
    expect(r.skips).toEqual([
      { runner: "playwright", file: "e2e/console.spec.ts", name: "console an approval skipped on purpose" },
      { runner: "playwright", file: "e2e/b.spec.ts", name: "b skips at run time — no chromium here" },
    ]);
    expect(checkSkips(r.skips, ALLOWED_SKIPS, {}).unexplained).toHaveLength(2);
  });

  it("todo tests count as skipped", () => {
    const r = readVitestReport({ testResults: [{ name: at("server/x.test.ts"), startTime: 0, endTime: 1, assertionResults: [{ fullName: "x later", status: "todo" }] }] }, root);
    expect(r.skips).toEqual([{ runner: "vitest", file: "server/x.test.ts", name: "x later" }]);
  });
});

describe("the failures that end npm test's output, named file › test", () => {
  // Shaped as vitest 4's json reporter wrote a failed run: a failed test, a file whose beforeAll threw (its tests never ran), a passing file.
  const failedVitest = {
    testResults: [
      {
        name: at("server/ledger/verify.test.ts"), startTime: 0, endTime: 10, status: "failed", message: "",
        assertionResults: [
          { ancestorTitles: ["verifyExport"], fullName: "verifyExport accepts an untouched export", status: "failed", title: "accepts an untouched export", failureMessages: ["AssertionError: expected false to be true"] },
          { ancestorTitles: ["verifyExport"], fullName: "verifyExport rejects a cut export", status: "passed", title: "rejects a cut export" },
        ],
      },
      {
        name: at("test/hub/http-hardening.test.ts"), startTime: 0, endTime: 20, status: "failed",
        message: "\ntoken create failed: leasehold: server/ledger/verify.ts changed since the last build\n    at beforeAll (test/hub/http-hardening.test.ts:40:11)",
        assertionResults: [{ ancestorTitles: ["http"], fullName: "http a 64 MiB body is refused", status: "skipped", title: "a 64 MiB body is refused" }],
      },
      { name: at("server/ok.test.ts"), startTime: 0, endTime: 1, status: "passed", message: "", assertionResults: [{ fullName: "fine", status: "passed", title: "fine" }] },
    ],
  };
  // Shaped as Playwright's json reporter wrote a failed run: a test failed on every attempt, a flaky one, and an error outside any test.
  const failedPlaywright = {
    config: { rootDir: at("e2e") },
    suites: [{
      title: "console.spec.ts", file: "console.spec.ts",
      suites: [{
        title: "console", file: "console.spec.ts",
        specs: [
          { title: "approves from the queue", file: "console.spec.ts", tests: [{ projectName: "chromium", status: "unexpected", annotations: [], results: [{ status: "failed", duration: 900 }, { status: "timedOut", duration: 30_000 }] }] },
          { title: "passes on a retry", file: "console.spec.ts", tests: [{ projectName: "chromium", status: "flaky", annotations: [], results: [{ status: "failed", duration: 300 }, { status: "passed", duration: 200 }] }] },
        ],
      }],
    }],
    errors: [
      { message: "Error: Timed out waiting 60000ms from config.webServer.\n    at webServer" },
      { message: "SyntaxError: Unexpected token", location: { file: at("e2e/broken.spec.ts"), line: 3, column: 1 } },
    ],
  };

  it("lists each failed test and each file that failed outside its tests, vitest then Playwright, under a count; flaky and passed tests are not listed", () => {
    const lines = failureLines([readVitestReport(failedVitest, root), readPlaywrightReport(failedPlaywright, root)]);
    expect(lines).toEqual([
      "failed (5; file › test):",
      "  vitest     server/ledger/verify.test.ts › verifyExport accepts an untouched export",
      "  vitest     test/hub/http-hardening.test.ts › (the file failed: token create failed: leasehold: server/ledger/verify.ts changed since the last build)",
      "  playwright e2e/console.spec.ts › console approves from the queue [chromium]",
      "  playwright (the run) › (error outside a test: Error: Timed out waiting 60000ms from config.webServer.)",
      "  playwright e2e/broken.spec.ts › (error outside a test: SyntaxError: Unexpected token)",
    ]);
  });

  it("a run where nothing failed adds no lines; a report from before failures were read counts as none", () => {
    expect(failureLines([readVitestReport(vitestReport, root), readPlaywrightReport(playwrightReport, root)])).toEqual([]);
    expect(failureLines([{ files: [], skips: [] } as unknown as ReturnType<typeof readVitestReport>])).toEqual([]);
  });

  it("a long error message is cut to one line of at most 200 characters", () => {
    const long = { testResults: [{ name: at("server/x.test.ts"), startTime: 0, endTime: 1, status: "failed", message: `${"x".repeat(500)}\nsecond line`, assertionResults: [] }] };
    const [, line] = failureLines([readVitestReport(long, root)]);
    expect(line).toBe(`  vitest     server/x.test.ts › (the file failed: ${"x".repeat(199)}…)`);
  });

  it("npm test prints them after the step summary and the seed, as its last lines", () => {
    const source = fs.readFileSync(at("tools/test.mjs"), "utf8");
    const printed = source.indexOf("for (const line of failureLines(readings)) console.log(line);");
    expect(printed).toBeGreaterThan(source.lastIndexOf("console.log(seedLine(seed));"));
    expect(source.slice(printed).split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("//"))).toHaveLength(2); // the loop, then process.exit
  });
});

describe("the allow-list explains every kernel-feature skip in the suite and nothing else", () => {
  // Each skip the suite can produce today, named as vitest's json reporter names it (describe titles, then the test's title).
  const kernelSkips: Skip[] = [
    ["native/test/corpus.test.ts", "native corpus, then the host checks hostile corpus: kills, limits and escapes arch check: an i386 syscall via int 0x80 is killed with SIGSYS (host kernel has IA32 emulation)"],
    ["native/test/corpus.test.ts", "native corpus, then the host checks hostile corpus: kills, limits and escapes arch check: kernel without IA32 emulation kills int 0x80 with SIGSEGV, in the lease as on the host (seccomp never sees it)"],
    ["native/test/host-view.test.ts", "masked /proc entries show nothing of the host /proc/sched_debug: host shows nothing (absent or unreadable on this kernel: row not tested), the lease shows 0"],
    ["native/test/host-view.test.ts", "masked /proc entries show nothing of the host /proc/acpi: host shows 0 (empty on this host: row not tested), the lease shows 0"],
    ["native/test/exec-from-memory.test.ts", "exec from memory vm.memfd_noexec is 2 inside the lease's pid namespace and unchanged on the host (kernel has the sysctl)"],
    ["native/test/exec-from-memory.test.ts", "exec from memory a lease's memfd is sealed non-executable: fchmod +x is EPERM (kernel has vm.memfd_noexec)"],
    ["native/test/netns.test.ts", "network namespace ownership hostile: a NETLINK_KOBJECT_UEVENT socket in a lease hears no host uevent written to /sys/devices/virtual/mem/null/uevent (or cannot be opened), where one in a root-owned netns on the host does"],
    ["native/test/egress-path.test.ts", "egress lease network path (veth per lease, under the BPF allow-list) IPv6 egress beyond the host end — skipped: this kernel has no per-interface IPv6 forwarding (force_forwarding, Linux 6.17)"],
    ["native/test/egress-path.test.ts", "egress lease network path (veth per lease, under the BPF allow-list) concurrent egress leases get distinct slots, interfaces and addresses, and each reaches the server — skipped: kernel lacks BPF program types cgroup_sock_addr, tracing"],
    ["native/test/bpf-net.test.ts", "BPF egress allow-list (process placed in a lease cgroup, test-created netns) a process outside the lease is unaffected while the lease is live — skipped: kernel lacks BPF program types cgroup_sock"],
    ["native/test/bpf-exec.test.ts", "BPF exec allow-list (launch, exec_kernel) a process outside the lease runs the same refused file while the lease is live — skipped: kernel lacks BPF program types tracing"],
  ].map(([file, name]) => ({ runner: "vitest", file: file!, name: name! }));

  it("each kernel-feature skip matches an entry", () => {
    expect(checkSkips(kernelSkips, ALLOWED_SKIPS, {}).unexplained).toEqual([]);
  });

  it("hostile: root-only skips, a kernel reason in another file, an appended excuse and the VM opt-out without its variable are all refused", () => {
    const refused: Skip[] = [
      ["agent-guest/daemon/daemon-workspace.test.ts", "guest daemon: the bounded workspace's life cycle (needs root) mounts and unmounts"],
      ["agent-guest/workspace/workspace-race.test.ts", "workspace: the root guest never chowns through a swapped-in symlink (RENAME_EXCHANGE race, real attacker process) chown race"],
      ["agent-guest/daemon/runner-scrub.test.ts", "a token straddling the 1 MiB returned size is not half-released (launched; needs root)"],
      ["native/test/seccomp.test.ts", "native corpus, then the host checks hostile corpus: kills, limits and escapes arch check: an i386 syscall via int 0x80 is killed with SIGSYS (host kernel has IA32 emulation)"],
      ["native/test/host-view.test.ts", "masked /proc entries show nothing of the host /proc/kcore: host shows nothing (absent or unreadable on this kernel: row not tested), the lease shows 0 — skipped: not root"],
      ["native/test/bpf-net.test.ts", "BPF egress allow-list a process outside the lease is unaffected — skipped: not root"],
      ["native/test/vm/vm.test.ts", "cgroup v2 controllers in a VM (pure cgroup2, +memory +pids +cpu) limits written and read back — skipped: LEASEHOLD_VM_TESTS=skip"],
    ].map(([file, name]) => ({ runner: "vitest", file: file!, name: name! }));
    expect(checkSkips(refused, ALLOWED_SKIPS, {}).unexplained).toEqual(refused);
  });

  it("the VM opt-out is accepted only when LEASEHOLD_VM_TESTS=skip was set for the run", () => {
    const vm: Skip = { runner: "vitest", file: "native/test/vm/bpf-lsm.test.ts", name: "BPF LSM in a VM bpf in lsm=: tier A detected — skipped: LEASEHOLD_VM_TESTS=skip" };
    expect(checkSkips([vm], ALLOWED_SKIPS, { LEASEHOLD_VM_TESTS: "skip" }).allowed).toHaveLength(1);
    expect(checkSkips([vm], ALLOWED_SKIPS, { LEASEHOLD_VM_TESTS: "" }).unexplained).toHaveLength(1);
  });

  it("every entry names a test file that exists and still skips conditionally, and says why", () => {
    for (const entry of ALLOWED_SKIPS) {
      const source = fs.readFileSync(at(entry.file), "utf8");
      expect(source, entry.file).toMatch(/\.skipIf\(/);
      expect(entry.why.length, entry.file).toBeGreaterThan(20);
    }
  });
});
