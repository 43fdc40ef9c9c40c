import { expect, it } from "vitest";
import { describeEachDatabase } from "../../../test/support/databases";
import { hosts } from "../../db/schema";
import { acquireLease, listActiveLeases } from "../../leases";
import { clientSettings } from "../../mcp";
import { authenticateToken, listTokens } from "../../tokens";
import { TEST_PUBLIC_URL, adminCaller, refusal } from "./test-callers";

describeEachDatabase("tokens router", (database) => {
  it("create needs re-authentication: a session past its password proof is refused with the reauthenticate hint and no token is made", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "owner", { stale: true });
    const refused = await refusal(caller.tokens.create({ name: "stale-try", expires: "1h", readOnly: false, tools: null, hosts: null }));
    expect([refused.code, refused.hint]).toEqual(["FORBIDDEN", "reauthenticate"]);
    expect((await listTokens(handle.db)).some((t) => t.name === "stale-try")).toBe(false);
  });

  it("create returns the secret once with the settings `leasehold mcp-config` prints; the token works; the list names its creator and never holds the secret", async () => {
    const { handle } = database();
    const { admin, caller } = await adminCaller(handle, "owner");
    const made = await caller.tokens.create({ name: "ci agent", expires: "12h", readOnly: true, tools: ["health"], hosts: ["local"] });
    expect(made.secret).toMatch(/^lh_/);
    expect(made.settings).toEqual(clientSettings(TEST_PUBLIC_URL, made.secret));
    expect(made.token).toMatchObject({ name: "ci agent", status: "active", readOnly: true, tools: ["health"], hosts: ["local"], createdBy: admin.username });
    const check = await authenticateToken(handle.db, made.secret);
    expect(check.ok && check.token.id).toBe(made.token.id);
    const listed = await caller.tokens.list();
    expect(listed.tokens.find((t) => t.id === made.token.id)).toMatchObject({ name: "ci agent", createdBy: admin.username, status: "active" });
    expect(JSON.stringify(listed)).not.toContain(made.secret);
    expect(listed.knownTools).toContain("health");
  });

  it("create refuses an unknown tool and a bad expiry (INVALID_ARGUMENT), making nothing", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "owner");
    expect((await refusal(caller.tokens.create({ name: "typo", expires: "1h", readOnly: false, tools: ["run_comand"], hosts: null }))).code).toBe("INVALID_ARGUMENT");
    expect((await refusal(caller.tokens.create({ name: "typo", expires: "forever", readOnly: false, tools: null, hosts: null }))).code).toBe("INVALID_ARGUMENT");
    expect((await listTokens(handle.db)).some((t) => t.name === "typo")).toBe(false);
  });

  it("revoke ends what the token started (its lease is released) and the token is refused afterwards; revoking again says so", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "owner");
    const made = await caller.tokens.create({ name: "to revoke", expires: "1h", readOnly: false, tools: null, hosts: null });
    const [host] = await handle.db.insert(hosts).values({ name: `h-${Date.now().toString(36)}`, publicKey: "test-key" }).returning();
    if (host === undefined) throw new Error("no host");
    await acquireLease(handle.db, { hostId: host.id, mode: "exclusive", holder: { ownerKind: "token", ownerId: made.token.id, sessionId: null, description: "agent" } });
    const result = await caller.tokens.revoke({ id: made.token.id });
    expect(result).toMatchObject({ id: made.token.id, alreadyRevoked: false, ended: { leasesReleased: 1, approvalsDenied: 0, jobsCancelled: 0 } });
    expect((await listActiveLeases(handle.db)).some((l) => l.host === host.name)).toBe(false);
    const check = await authenticateToken(handle.db, made.secret);
    expect(check.ok).toBe(false);
    expect((await caller.tokens.list()).tokens.find((t) => t.id === made.token.id)?.status).toBe("revoked");
    expect((await caller.tokens.revoke({ id: made.token.id })).alreadyRevoked).toBe(true);
  });
});
