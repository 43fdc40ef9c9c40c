/**
 * What the browser console's form offers (owner, like console.submit):
 * hosts and operations with their argument fields. Running goes through
 * console.submit / console.resume, the same pipeline as MCP.
 */
import { ROLES } from "../../admins";
import { consoleTargets } from "../../action-records";
import { createCapabilityRegistry } from "../../capabilities";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

export const consoleFormRouter = createRouter({
  // The builtin registry, as actionPipelineFor builds it: opt-in capabilities are not offered until enabling them is wired.
  targets: roleProcedure(ROLES.owner).query(({ ctx }) => channel(() => consoleTargets(ctx.runtime.database.handle.db, createCapabilityRegistry()))),
});
