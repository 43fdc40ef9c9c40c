import { requireActiveAdmin } from "../../admins";
import { capabilityEgressConfiguration, hubCapabilityRegistry, loadEnabledCapabilities, setCapabilityEgress, setCapabilityEnabled } from "../../capabilities";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { commaList, parseCommandArgs, requireFlag, splitSubcommand } from "../args";

const USAGE = [
  "leasehold capability list",
  "       leasehold capability enable ID --as ADMIN | disable ID --as ADMIN",
  "       leasehold capability egress ID [--set RULE,RULE… | --default] [--as ADMIN]",
  "",
  "list shows every declared capability, its activation and whether it is active. enable and",
  "disable take an opt-in capability's exact id; the choice is stored with the manifest it was",
  "made for, sealed as admin/1 under the named admin, applied by a running hub at once and by",
  "every later start.",
  "",
  "egress shows or sets the egress allow-list of a network-egress capability (egress-shell):",
  "canonical CIDR:port rules (10.1.0.0/16:443, [2001:db8::/32]:443) and name:port rules",
  "(api.example.test:443; the guest resolves the name when a lease starts and allows exactly its",
  "addresses). --set replaces the manifest's default list (--set= with no rule: no network);",
  "--default goes back to the manifest's list. A request may narrow the list, never widen it;",
  "each host's ceiling still bounds what it runs. Sealed as admin/1 under the named admin.",
].join("\n");

export const capabilityCommand = {
  name: "capability",
  summary: "list capabilities, or enable / disable an opt-in one by its exact id",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { sub, rest } = splitSubcommand(args, ["list", "enable", "disable", "egress"]);
    if (sub === "egress") return egress(rest, ctx);
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

async function egress(rest: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(rest, { as: { type: "string" }, set: { type: "string" }, default: { type: "boolean" } }, { min: 1, max: 1, label: "capability ID" });
  const id = positionals[0] as string;
  if (values.set !== undefined && values.default === true) throw new UsageError("--set and --default exclude each other");
  if (values.set === undefined && values.default !== true) {
    if (values.as !== undefined) throw new UsageError("--as is for a change: add --set RULES or --default");
    const stored = await ctx.withDatabase("leasehold capability egress", ({ handle }) => capabilityEgressConfiguration(handle.db, id));
    const manifest = hubCapabilityRegistry().get(id)?.manifest;
    const fallback = manifest === undefined || manifest.sandbox.network === "none" ? "none" : manifest.sandbox.network.egress.join(", ");
    ctx.out(stored === null ? `capability ${id}: no admin egress configuration; the manifest's list applies: ${fallback}` : `capability ${id}: admin egress configuration: ${stored.egress.length === 0 ? "(empty: no network)" : stored.egress.join(", ")}`);
    return EXIT.ok;
  }
  const as = requireFlag(values, "as");
  const rules = values.set === undefined ? null : commaList(values.set);
  const change = await ctx.withDatabase("leasehold capability egress", async ({ handle }) => {
    const admin = await requireActiveAdmin(handle.db, as);
    return setCapabilityEgress(handle.db, hubCapabilityRegistry(), { id, egress: rules, adminId: admin.id });
  });
  ctx.out(
    change.egress === null
      ? `capability ${change.id}: egress back to the manifest's list, by ${as}; sealed as admin/1`
      : `capability ${change.id}: egress set to ${change.egress.length === 0 ? "(nothing: no network)" : change.egress.join(", ")} by ${as} (settings ${change.settingsDigest}); sealed as admin/1`,
  );
  return EXIT.ok;
}
