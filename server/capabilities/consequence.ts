/**
 * What switching an opt-in capability on or off does, in one sentence a
 * person reads before confirming (the Hosts page's Capabilities list). The
 * network comes first: a capability with egress lets sandboxed commands
 * connect out, the one reach no other capability gives.
 */
import type { Manifest } from "./manifest-schema";

export interface CapabilityConsequence {
  enable: string;
  disable: string;
}

export function capabilityConsequence(manifest: Manifest): CapabilityConsequence {
  const operations = manifest.operations.map((o) => o.name).join(", ");
  const disable = `New calls to ${operations} are refused on every host from then on.`;
  if (manifest.sandbox.network !== "none") {
    const rules = manifest.sandbox.network.egress;
    return {
      enable: `Commands on every host may reach the network: agents whose tokens allow ${operations} can connect to ${rules.length === 0 ? "the egress list you configure" : rules.join(", ")} (or the egress list you configure instead), within each host's ceiling. Each call is still rated and held or granted as before.`,
      disable,
    };
  }
  const mutating = manifest.operations.some((o) => o.mutating);
  return {
    enable: `Agents whose tokens allow ${operations} can call ${manifest.operations.length === 1 ? "it" : "them"} on every host where ${manifest.id} is ready${mutating ? ", changing the workspace" : ""}. Each call is still rated and held or granted as before.`,
    disable,
  };
}
