/**
 * `leasehold-guest`: the per-host guest agent.
 *
 *   LEASEHOLD_ENROL_CODE=lhe_… leasehold-guest enrol --hub URL [--state-dir DIR]
 *   leasehold-guest enrol --hub URL [--state-dir DIR] < code-file
 *   leasehold-guest run [--state-dir DIR] [--ceiling FILE] [--hub URL --enrol-stdin]
 *
 * The enrolment code is a credential: it never travels in argv, where every
 * local user reads it (/proc/PID/cmdline). `enrol` takes it from
 * LEASEHOLD_ENROL_CODE or the first line of stdin; `run --enrol-stdin`
 * reads it from stdin and enrols first when not yet enrolled (how `leasehold
 * start` hands its local guest the code, through a pipe). Needs root: the sandbox creates
 * namespaces and cgroups, and the ceiling file must be root-owned.
 */
import fs from "node:fs";
import { UsageError, parseCommandArgs, requireFlag } from "../common/cli/args";
import { LeaseholdError } from "../server/trust";
import { enrol } from "./daemon/enrol";
import { requireHubTransport } from "./daemon/transport";
import { GuestDaemon } from "./daemon/daemon";
import { DEFAULT_STATE_DIR, loadEnrolment } from "./daemon/state";

export const DEFAULT_CEILING_PATH = "/etc/leasehold/ceiling.json";
const USAGE = `usage: leasehold-guest enrol --hub URL [--state-dir DIR] [--insecure-http]   (code in LEASEHOLD_ENROL_CODE or on stdin)
       leasehold-guest run [--state-dir DIR] [--ceiling FILE] [--hub URL --enrol-stdin] [--insecure-http]
  --enrol-stdin    read an enrolment code from stdin and enrol first when not yet enrolled
  --insecure-http  allow http:// to a hub that is not on this machine (unencrypted; see agent-guest/README.md)`;

// `code` / `enrol-code` are declared only to be refused with a message saying how to pass the code now.
const ENROL_FLAGS = { hub: { type: "string" }, code: { type: "string" }, "state-dir": { type: "string" }, "insecure-http": { type: "boolean" } } as const;
const RUN_FLAGS = {
  hub: { type: "string" },
  "enrol-code": { type: "string" },
  "enrol-stdin": { type: "boolean" },
  "state-dir": { type: "string" },
  ceiling: { type: "string" },
  "insecure-http": { type: "boolean" },
} as const;

export const ENROL_CODE_ENV = "LEASEHOLD_ENROL_CODE";

function refuseCodeInArgv(flag: string): never {
  throw new UsageError(`${flag} is refused: a code on the command line is readable by every local user (/proc/PID/cmdline); pass it in ${ENROL_CODE_ENV} or on stdin`);
}

/** The first line of stdin (a pipe, a file or a terminal), trimmed; at most 4 KiB is read. */
export function readCodeFromStdin(fd = 0): string {
  const buffer = Buffer.alloc(4096);
  let length = 0;
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(fd, buffer, length, buffer.length - length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
      if ((error as NodeJS.ErrnoException).code === "EOF") break;
      throw error;
    }
    if (n === 0) break;
    length += n;
    if (buffer.subarray(0, length).includes(0x0a) || length === buffer.length) break;
  }
  return buffer.subarray(0, length).toString("utf8").split("\n")[0]?.trim() ?? "";
}

/** The enrolment code from LEASEHOLD_ENROL_CODE, else from stdin. */
function enrolCode(env: Readonly<Record<string, string | undefined>>, fromStdin: () => string): string {
  const code = (env[ENROL_CODE_ENV] ?? "").trim() || fromStdin();
  if (code === "") throw new UsageError(`no enrolment code: set ${ENROL_CODE_ENV} or pass it on stdin`);
  return code;
}

/**
 * The sandbox needs root (namespaces, cgroups, per-lease uids) and the state
 * directory holds root-only keys: refused up front, rather than a guest that
 * runs, fails its self-test and takes no jobs.
 */
export function requireRoot(uid: number | null = process.getuid?.() ?? null): void {
  if (uid !== 0) throw new LeaseholdError("UNENFORCEABLE", `leasehold-guest must run as root (the sandbox creates namespaces, cgroups and per-lease uids); running as uid ${uid ?? "unknown"}`, { tier: "guest" });
}

/** A usage mistake exits 2 with one line; anything that went wrong while doing the work exits 1. */
export async function guestMain(argv: string[], io: { env?: Readonly<Record<string, string | undefined>>; stdin?: () => string } = {}): Promise<number> {
  const env = io.env ?? process.env;
  const stdin = io.stdin ?? (() => readCodeFromStdin());
  const [command, ...rest] = argv;
  try {
    if (command === "enrol") {
      const { values } = parseCommandArgs(rest, ENROL_FLAGS);
      if (values.code !== undefined) refuseCodeInArgv("--code");
      requireRoot();
      const hub = requireFlag(values, "hub");
      const stateDir = values["state-dir"] ?? DEFAULT_STATE_DIR;
      const warning = requireHubTransport(hub, { insecureHttp: values["insecure-http"] });
      if (warning !== null) console.error(`leasehold-guest: warning: ${warning}`);
      const e = await enrol({ hub, code: enrolCode(env, stdin), stateDir });
      console.log(`enrolled as host ${JSON.stringify(e.name)} (${e.host_id}) with ${e.hub}; state in ${stateDir}`);
      return 0;
    }
    if (command === "run") {
      const { values } = parseCommandArgs(rest, RUN_FLAGS);
      if (values["enrol-code"] !== undefined) refuseCodeInArgv("--enrol-code");
      requireRoot();
      const stateDir = values["state-dir"] ?? DEFAULT_STATE_DIR;
      // Read even when already enrolled, so the writer of the pipe never blocks.
      const code = values["enrol-stdin"] === true ? stdin().trim() : undefined;
      if (code !== undefined && loadEnrolment(stateDir) === null) {
        const hub = requireFlag(values, "hub", "--enrol-stdin enrols with that hub");
        requireHubTransport(hub, { insecureHttp: values["insecure-http"] });
        if (code === "") throw new UsageError("--enrol-stdin: stdin held no enrolment code");
        const e = await enrol({ hub, code, stateDir });
        console.error(`leasehold-guest: enrolled as host ${JSON.stringify(e.name)} (${e.host_id})`);
      }
      const enrolled = loadEnrolment(stateDir);
      // Checked on every start, against the URL the guest will actually use.
      const warning = enrolled === null ? null : requireHubTransport(enrolled.hub, { insecureHttp: values["insecure-http"] });
      if (warning !== null) console.error(`leasehold-guest: warning: ${warning}`);
      const daemon = new GuestDaemon({ stateDir, ceilingPath: values.ceiling ?? DEFAULT_CEILING_PATH });
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        void daemon.shutdown();
      };
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
      console.error(`leasehold-guest: connecting to ${daemon.enrolment.hub} as ${daemon.enrolment.name}`);
      await daemon.run();
      return 0;
    }
    if (command === undefined || command === "--help" || command === "help") {
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    }
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`leasehold-guest${command === "enrol" || command === "run" ? ` ${command}` : ""}: ${error.message}\n${USAGE}`);
      return 2;
    }
    console.error(`leasehold-guest: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
