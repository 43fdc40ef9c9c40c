// vitest set-up file of every project: when TEST_CPU_LOG names a file
// (tools/test.mjs sets it), each test file appends one JSON line there with
// the CPU seconds it used — its worker process (module imports and
// in-process PGlite included) and the children it waited for (hubs, guests,
// CLIs, sandboxes) — so `npm test` can name the files that do the work.
// Without TEST_CPU_LOG it does nothing.
//
// Measured from when this file is loaded: in a fresh process ("parallel",
// "serial", "alone") that is just before the test file's imports; in the
// shared group's long-lived process, vitest loads set-up files again for
// each test file, so each reading starts at its own file.
import fs from "node:fs";
import path from "node:path";
import { afterAll, expect } from "vitest";
import { processCpu } from "./cpu-use.mjs";

const log = process.env.TEST_CPU_LOG;
if (log) {
  const start = processCpu();
  afterAll(() => {
    const end = processCpu();
    const testPath = expect.getState().testPath ?? "(unknown file)";
    const file = path.relative(process.cwd(), testPath).split(path.sep).join("/");
    // One short write per file with O_APPEND: lines from two workers do not interleave.
    fs.appendFileSync(log, `${JSON.stringify({ file, self: +(end.self - start.self).toFixed(2), children: +(end.children - start.children).toFixed(2) })}\n`);
  });
}
