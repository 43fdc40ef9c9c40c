import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { capabilities, ledgerEntries } from "../db/schema";
import { describeEachDatabase } from "../../test/support/databases";
import { insertAdmin } from "../../test/pipeline/support";
import { capabilityEgressConfiguration, loadEnabledCapabilities, setCapabilityEgress, setCapabilityEnabled } from "./enablement";
import { createCapabilityRegistry } from "./registry";

describeEachDatabase("enabling an opt-in capability by its exact id", (db) => {
  it("refuses an unknown id and a capability that is not opt-in, storing nothing", async () => {
    const admin = await insertAdmin(db().handle.db);
    const registry = createCapabilityRegistry();
    await expect(setCapabilityEnabled(db().handle.db, registry, { id: "egress", enabled: true, adminId: admin.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(setCapabilityEnabled(db().handle.db, registry, { id: "shell", enabled: false, adminId: admin.id })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await db().handle.db.select().from(capabilities).where(eq(capabilities.id, "egress"))).toEqual([]);
  });

  it("enables egress-shell: its operation resolves at once, the choice is sealed, and a fresh registry loads it at start", async () => {
    const admin = await insertAdmin(db().handle.db);
    const registry = createCapabilityRegistry();
    expect(() => registry.resolveOperation("run_command_net")).toThrow(/not enabled/);
    const before = (await db().handle.db.select().from(ledgerEntries)).length;
    const change = await setCapabilityEnabled(db().handle.db, registry, { id: "egress-shell", enabled: true, adminId: admin.id });
    expect(change.manifestDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(registry.resolveOperation("run_command_net").operation.name).toBe("run_command_net");
    expect((await db().handle.db.select().from(ledgerEntries)).length).toBe(before + 1);

    const restarted = createCapabilityRegistry();
    expect(await loadEnabledCapabilities(db().handle.db, restarted)).toEqual([]);
    expect(restarted.isActive("egress-shell")).toBe(true);

    await setCapabilityEnabled(db().handle.db, registry, { id: "egress-shell", enabled: false, adminId: admin.id });
    expect(registry.isActive("egress-shell")).toBe(false);
    const again = createCapabilityRegistry();
    await loadEnabledCapabilities(db().handle.db, again);
    expect(again.isActive("egress-shell")).toBe(false);
  });

  it("leaves a capability off when the stored choice was made for a different manifest", async () => {
    const admin = await insertAdmin(db().handle.db);
    await setCapabilityEnabled(db().handle.db, createCapabilityRegistry(), { id: "egress-shell", enabled: true, adminId: admin.id });
    const [row] = await db().handle.db.select().from(capabilities).where(eq(capabilities.id, "egress-shell"));
    await db().handle.db.update(capabilities).set({ manifest: { ...(row?.manifest as object), version: "0.0.1" } }).where(eq(capabilities.id, "egress-shell"));
    const registry = createCapabilityRegistry();
    const notes = await loadEnabledCapabilities(db().handle.db, registry);
    expect(notes).toEqual([expect.stringContaining('capability "egress-shell" was enabled for a different manifest')]);
    expect(registry.isActive("egress-shell")).toBe(false);
  });

  it("stores the admin egress configuration of egress-shell (names and addresses, normalised), seals it, and clears it back to the manifest's list", async () => {
    const admin = await insertAdmin(db().handle.db);
    const registry = createCapabilityRegistry();
    const before = (await db().handle.db.select().from(ledgerEntries)).length;
    const change = await setCapabilityEgress(db().handle.db, registry, { id: "egress-shell", egress: ["api.example.test:443", "10.0.0.0/8:443", "10.1.0.0/16:443", "api.example.test:443"], adminId: admin.id });
    expect(change.egress).toEqual(["10.0.0.0/8:443", "api.example.test:443"]);
    expect(await capabilityEgressConfiguration(db().handle.db, "egress-shell")).toEqual({ name: "admin egress configuration", egress: ["10.0.0.0/8:443", "api.example.test:443"] });
    const entries = await db().handle.db.select().from(ledgerEntries);
    expect(entries.length).toBe(before + 1);
    expect(entries.map((e) => Buffer.from(e.body).toString("utf8")).join("\n")).toContain("\"operation\":\"capability.egress\"");

    await setCapabilityEgress(db().handle.db, registry, { id: "egress-shell", egress: null, adminId: admin.id });
    expect(await capabilityEgressConfiguration(db().handle.db, "egress-shell")).toBeNull();
  });

  it("refuses an egress configuration with a non-canonical rule, or for a capability without network", async () => {
    const admin = await insertAdmin(db().handle.db);
    const registry = createCapabilityRegistry();
    await expect(setCapabilityEgress(db().handle.db, registry, { id: "egress-shell", egress: ["API.example.test:443"], adminId: admin.id })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(setCapabilityEgress(db().handle.db, registry, { id: "shell", egress: ["10.0.0.0/8:443"], adminId: admin.id })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(setCapabilityEgress(db().handle.db, registry, { id: "nope", egress: [], adminId: admin.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
