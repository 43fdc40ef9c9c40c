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
import { enrol } from "./daemon/enrol";
import { GuestDaemon } from "./daemon/daemon";
import { DEFAULT_STATE_DIR, loadEnrolment } from "./daemon/state";

export const DEFAULT_CEILING_PATH = "/etc/leasehold/ceiling.json";
const USAGE = `usage: leasehold-guest enrol --hub URL --code CODE [--state-dir DIR]
       leasehold-guest run [--state-dir DIR] [--ceiling FILE] [--hub URL --enrol-code CODE]`;

function flags(args: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i] ?? "";
    const value = args[i + 1];
    if (!flag.startsWith("--") || value === undefined) throw new Error(`unexpected argument ${JSON.stringify(flag)}\n${USAGE}`);
    out.set(flag.slice(2), value);
  }
  return out;
}

export async function guestMain(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === "enrol") {
      const f = flags(rest);
      const hub = f.get("hub");
      const code = f.get("code");
      if (hub === undefined || code === undefined) throw new Error(`--hub and --code are required\n${USAGE}`);
      const stateDir = f.get("state-dir") ?? DEFAULT_STATE_DIR;
      const e = await enrol({ hub, code, stateDir });
      console.log(`enrolled as host ${JSON.stringify(e.name)} (${e.host_id}) with ${e.hub}; state in ${stateDir}`);
      return 0;
    }
    if (command === "run") {
      const f = flags(rest);
      const stateDir = f.get("state-dir") ?? DEFAULT_STATE_DIR;
      const code = f.get("enrol-code");
      if (code !== undefined && loadEnrolment(stateDir) === null) {
        const hub = f.get("hub");
        if (hub === undefined) throw new Error(`--enrol-code needs --hub\n${USAGE}`);
        const e = await enrol({ hub, code, stateDir });
        console.error(`leasehold-guest: enrolled as host ${JSON.stringify(e.name)} (${e.host_id})`);
      }
      const daemon = new GuestDaemon({ stateDir, ceilingPath: f.get("ceiling") ?? DEFAULT_CEILING_PATH });
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
    console.error(USAGE);
    return command === undefined || command === "--help" ? 0 : 2;
  } catch (error) {
    console.error(`leasehold-guest: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
