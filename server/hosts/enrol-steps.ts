/**
 * The steps a person follows to bring a fresh machine in as a host, as the
 * browser's "Enrol a host" panel shows them: each a shell line that works
 * there as written. The package is not published to a registry, so the
 * executable is the checkout's own `bin/leasehold-guest.mjs`, built on the
 * host (the executables run only compiled code); the guest refuses to run
 * without a root-owned ceiling file, so the panel gives one to start from.
 */
import { enrolCommand } from "./enrolment";
import { defaultCeiling } from "./local-guest";

/** Where `leasehold-guest run` looks for its ceiling by default (agent-guest/cli.ts). */
export const HOST_CEILING_PATH = "/etc/leasehold/ceiling.json";
/** Where the template puts the workspace; the guest mounts its ext4 image there. */
export const HOST_WORKSPACE_PATH = "/var/lib/leasehold/workspace";
const GUEST = "node bin/leasehold-guest.mjs";

export interface EnrolStep {
  /** What the step does, in words. */
  title: string;
  /** The shell text to run, in the checkout's directory, as root. */
  command: string;
}

/** The host's ceiling to start from: the same limits as the hub's own local guest, one CPU until the operator says more. */
export function ceilingTemplate(): string {
  const ceiling = defaultCeiling(HOST_WORKSPACE_PATH);
  const max = ceiling["max"] as Record<string, unknown>;
  return `${JSON.stringify({ ...ceiling, max: { ...max, cpus: 1 } }, null, 2)}\n`;
}

export function enrolSteps(publicUrl: string, code: string): EnrolStep[] {
  return [
    { title: "Build the guest in a copy of this Leasehold checkout on the host", command: "npm ci && npm run build" },
    {
      title: `Write the host's ceiling (the most any job may get; edit cpus, memory and egress to fit the host)`,
      command: `install -d -m 0755 /etc/leasehold && cat > ${HOST_CEILING_PATH} <<'CEILING'\n${ceilingTemplate()}CEILING`,
    },
    { title: "Enrol with the one-time code (on stdin, never in argv)", command: enrolCommand(publicUrl, code).replace("| leasehold-guest enrol", `| ${GUEST} enrol`) },
    { title: "Run the guest (keep it running, e.g. under systemd)", command: `${GUEST} run --ceiling ${HOST_CEILING_PATH}` },
  ];
}
