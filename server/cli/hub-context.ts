import type { HubRuntime } from "../hub/runtime";
import type { ControlRequest } from "../hub/control-socket";
import type { CliContext, CliOutput } from "./context";
import { LeaseholdError } from "../errors";

/**
 * The context of a command sent over the control socket: it runs inside the
 * hub and borrows the hub's open database instead of opening one.
 */
export function hubContext(runtime: HubRuntime, request: ControlRequest, output: CliOutput): CliContext {
  return {
    ...output,
    env: request.env,
    cwd: request.cwd,
    loadWeb: () => Promise.reject(new LeaseholdError("INVALID_ARGUMENT", "this command cannot run inside the hub")),
    withDatabase: (_purpose, fn) => fn({ config: runtime.config, handle: runtime.database.handle }),
  };
}
