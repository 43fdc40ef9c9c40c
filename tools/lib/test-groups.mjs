// Which vitest files may share the machine with another file and which run
// alone. vitest.config.ts builds its two projects from this:
//
//   parallel  two workers at once: hubs, databases, pure units, CLIs.
//   serial    one file at a time, after the parallel group: files that take
//             kernel resources a second copy could trip over (sandbox
//             launches, cgroups, loop-device workspace volumes, network
//             namespaces, VMs, real guests, leftover-mount sweeps).
//
// A file is serial when it sits under one of SERIAL_FOLDERS, or when its
// first lines carry the marker `test-group: serial` (in a comment, followed
// by the reason) — for a file elsewhere that launches a sandbox or a guest.
import fs from "node:fs";
import path from "node:path";

/** Where vitest looks for test files. */
export const TEST_FILES = ["server/**/*.test.ts", "common/**/*.test.ts", "tools/**/*.test.ts", "test/**/*.test.ts", "native/**/*.test.ts", "agent-guest/**/*.test.ts"];
export const TEST_EXCLUDE = ["node_modules/**", "e2e/**", ".next/**", "dist/**"];

/** Folders whose every test file is serial: the native sandbox, the guest's workspace volumes, real guests and kernel egress. */
export const SERIAL_FOLDERS = ["native/", "agent-guest/workspace/", "agent-guest/daemon/", "test/guest/", "test/egress/", "test/apk/"];

/** The marker, looked for in a file's first MARKER_LINES lines. */
export const SERIAL_MARKER = /^\s*(?:\/\/|\*|\/\*\*?)\s*test-group: serial\b/m;
const MARKER_LINES = 40;

const ROOTS = [...new Set(TEST_FILES.map((glob) => glob.split("/")[0]))];

function testFilesUnder(root, top) {
  const dir = path.join(root, top);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((rel) => `${top}/${rel.split(path.sep).join("/")}`)
    .filter((rel) => rel.endsWith(".test.ts") && !TEST_EXCLUDE.some((ex) => rel.startsWith(ex.replace("/**", "/"))) && !rel.includes("/node_modules/"));
}

/** Whether the file's head carries the serial marker. */
export function hasSerialMarker(text) {
  return SERIAL_MARKER.test(text.split("\n", MARKER_LINES).join("\n"));
}

/** Test files (relative to `root`, forward slashes) outside SERIAL_FOLDERS that carry the marker. */
export function markedSerialFiles(root) {
  return ROOTS.flatMap((top) => testFilesUnder(root, top)).filter(
    (rel) => !SERIAL_FOLDERS.some((folder) => rel.startsWith(folder)) && hasSerialMarker(fs.readFileSync(path.join(root, rel), "utf8")),
  );
}

/** The include globs of the serial group: its folders and the marked files. */
export function serialGlobs(root) {
  return [...SERIAL_FOLDERS.map((folder) => `${folder}**/*.test.ts`), ...markedSerialFiles(root)];
}
