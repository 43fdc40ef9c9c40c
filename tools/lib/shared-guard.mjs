// Set-up file of vitest's shared group (tools/lib/test-groups.mjs): there
// many test files run one after another in one process, which is sound only
// for files that start nothing. The group is chosen by reading each file's
// text; this makes the rule hold at run time too: in a shared worker every
// way to start a child process throws, naming the way out, so a file that
// reaches a process through a helper fails loudly instead of leaving its
// child behind or sharing its state with the next file.
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";

export const SHARED_GUARD_MESSAGE =
  "vitest's shared group (one process for many test files, tools/lib/test-groups.mjs) starts no child process: give this file the comment `test-group: isolated <reason>` in its first lines";

const installed = Symbol.for("leasehold.test.sharedGuard");
const STARTERS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"];

if (!childProcess[installed]) {
  for (const name of STARTERS) {
    childProcess[name] = () => {
      throw new Error(`child_process.${name}: ${SHARED_GUARD_MESSAGE}`);
    };
  }
  childProcess[installed] = true;
  // `import { spawn } from "node:child_process"` reads the ESM view of the module: bring it in line.
  syncBuiltinESMExports();
}
