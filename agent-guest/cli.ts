/**
 * `leasehold-guest`: the per-host guest agent.
 *
 *   leasehold-guest enrol --hub URL --code CODE [--state-dir DIR]
 *   leasehold-guest run [--state-dir DIR] [--ceiling FILE] [--hub URL --enrol-code CODE]
 *
 * `run` enrols first when given a code and not yet enrolled (how `leasehold
 * start` starts its local guest). Needs root: the sandbox creates
 * namespaces and cgroups, and the ceiling file must be root-owned.
 */
import { parseCommandArgs, requireFlag } from "../server/cli/args";
import { UsageError } from "../server/cli/io";
import { LeaseholdError } from "../server/errors/index";
import { enrol } from "./daemon/enrol";
import { requireHubTransport } from "./daemon/transport";
import { GuestDaemon } from "./daemon/daemon";
import { DEFAULT_STATE_DIR, loadEnrolment } from "./daemon/state";

export const DEFAULT_CEILING_PATH = "/etc/leasehold/ceiling.json";
const USAGE = `usage: leasehold-guest enrol --hub URL --code CODE [--state-dir DIR] [--insecure-http]
       leasehold-guest run [--state-dir DIR] [--ceiling FILE] [--hub URL --enrol-code CODE] [--insecure-http]
  --insecure-http  allow http:// to a hub that is not on this machine (unencrypted; see agent-guest/README.md)`;

const ENROL_FLAGS = { hub: { type: "string" }, code: { type: "string" }, "state-dir": { type: "string" }, "insecure-http": { type: "boolean" } } as const;
const RUN_FLAGS = { hub: { type: "string" }, "enrol-code": { type: "string" }, "state-dir": { type: "string" }, ceiling: { type: "string" }, "insecure-http": { type: "boolean" } } as const;

/**
 * The sandbox needs root (namespaces, cgroups, per-lease uids) and the state
 * directory holds root-only keys: refused up front, rather than a guest that
 * runs, fails its self-test and takes no jobs.
 */
export function requireRoot(uid: number | null = process.getuid?.() ?? null): void {
  if (uid !== 0) throw new LeaseholdError("UNENFORCEABLE", `leasehold-guest must run as root (the sandbox creates namespaces, cgroups and per-lease uids); running as uid ${uid ?? "unknown"}`, { tier: "guest" });
}

/** A usage mistake exits 2 with one line; anything that went wrong while doing the work exits 1. */
export async function guestMain(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === "enrol") {
      const { values } = parseCommandArgs(rest, ENROL_FLAGS);
      requireRoot();
      const hub = requireFlag(values, "hub");
      const code = requireFlag(values, "code");
      const stateDir = values["state-dir"] ?? DEFAULT_STATE_DIR;
      const warning = requireHubTransport(hub, { insecureHttp: values["insecure-http"] });
      if (warning !== null) console.error(`leasehold-guest: warning: ${warning}`);
      const e = await enrol({ hub, code, stateDir });
      console.log(`enrolled as host ${JSON.stringify(e.name)} (${e.host_id}) with ${e.hub}; state in ${stateDir}`);
      return 0;
    }
    if (command === "run") {
      const { values } = parseCommandArgs(rest, RUN_FLAGS);
      requireRoot();
      const stateDir = values["state-dir"] ?? DEFAULT_STATE_DIR;
      const code = values["enrol-code"];
      if (code !== undefined && loadEnrolment(stateDir) === null) {
        const hub = requireFlag(values, "hub", "--enrol-code enrols with that hub");
        requireHubTransport(hub, { insecureHttp: values["insecure-http"] });
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
