import { requireActiveAdmin } from "../../admins";
import { hubCapabilityRegistry, loadEnabledCapabilities, setCapabilityEnabled } from "../../capabilities";
import type { CliContext } from "../context";
import { EXIT } from "../io";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";

const USAGE = [
  "leasehold capability list",
  "       leasehold capability enable ID --as ADMIN | disable ID --as ADMIN",
  "",
  "list shows every declared capability, its activation and whether it is active. enable and",
  "disable take an opt-in capability's exact id; the choice is stored with the manifest it was",
  "made for, sealed as admin/1 under the named admin, applied by a running hub at once and by",
  "every later start.",
].join("\n");

export const capabilityCommand = {
  name: "capability",
  summary: "list capabilities, or enable / disable an opt-in one by its exact id",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { sub, rest } = splitSubcommand(args, ["list", "enable", "disable"]);
    if (sub === "list") {
      parseCommandArgs(rest, {});
      const listing = await ctx.withDatabase("leasehold capability list", async ({ handle }) => {
        // Inside a running hub this is its own registry already; run alone, the stored choices are applied first.
        await loadEnabledCapabilities(handle.db, hubCapabilityRegistry());
        return hubCapabilityRegistry().list();
      });
      for (const c of listing) {
        ctx.out(`${c.id}  v${c.version}  ${c.activation}  ${c.status === "active" ? "active" : "not enabled"}  ${c.operations.map((o) => o.name).join(",")}`);
      }
      return EXIT.ok;
    }
    const { values, positionals } = parseCommandArgs(rest, { as: { type: "string" } }, { min: 1, max: 1, label: "capability ID" });
    const as = requireFlag(values, "as");
    const id = positionals[0] as string;
    const change = await ctx.withDatabase(`leasehold capability ${sub}`, async ({ handle }) => {
      const admin = await requireActiveAdmin(handle.db, as);
      return setCapabilityEnabled(handle.db, hubCapabilityRegistry(), { id, enabled: sub === "enable", adminId: admin.id });
    });
    ctx.out(`capability ${change.id} ${change.enabled ? "enabled" : "disabled"} by ${as} (manifest ${change.manifestDigest}); sealed as admin/1`);
    return EXIT.ok;
  },
};
