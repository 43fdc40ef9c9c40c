import { describe, expect, it } from "vitest";
import { BUILTIN_MANIFESTS } from "./builtin";
import { capabilityConsequence } from "./consequence";
import { parseManifest } from "./manifest-schema";

const manifests = BUILTIN_MANIFESTS.map((m) => parseManifest(m.manifest, m.source));

describe("capability switch consequences", () => {
  it("says first that enabling a capability with egress lets commands on every host reach the network, naming its operations and rules", () => {
    const egress = manifests.find((m) => m.id === "egress-shell");
    if (egress === undefined) throw new Error("no egress-shell manifest");
    const text = capabilityConsequence(egress).enable;
    expect(text.startsWith("Commands on every host may reach the network")).toBe(true);
    for (const op of egress.operations) expect(text).toContain(op.name);
  });

  it("says nothing about the network for a capability without one", () => {
    for (const manifest of manifests.filter((m) => m.sandbox.network === "none")) {
      const { enable, disable } = capabilityConsequence(manifest);
      expect(enable).not.toMatch(/network/);
      expect(disable).toContain(manifest.operations[0]?.name ?? "?");
    }
  });
});
