import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../../test/support/databases";
import { hashPassword } from "../../admins";
import type { DatabaseHandle } from "../../db";
import { adminUsers, oauthAuthorizations } from "../../db/schema";
import { knownToolNames } from "../../mcp";
import { beginAuthorization, findClient, getOAuthSettings, mcpResourceUrl } from "../../oauth";
import { clientResolver, registerClientByAdmin } from "../../oauth/clients";
import { challengeOf } from "../../oauth/pkce";
import { TEST_PUBLIC_URL, adminCaller, refusal } from "./test-callers";

const PASSWORD = "a long and correct sign-in password";
const REDIRECT = "http://127.0.0.1:45123/callback";

describeEachDatabase("oauth router", (database) => {
  /** An owner with a real password, and a consent request shown to them. */
  async function ownerWithRequest(handle: DatabaseHandle, options: { stale?: boolean } = {}) {
    const owner = await adminCaller(handle, "owner", options);
    await handle.db.update(adminUsers).set({ passwordHash: await hashPassword(PASSWORD) }).where(eq(adminUsers.id, owner.admin.id));
    const client = await registerClientByAdmin(handle.db, { name: "Router client", redirectUris: [REDIRECT] }, owner.admin.id, "localhost");
    const query = new URLSearchParams({ response_type: "code", client_id: client.id, redirect_uri: REDIRECT, code_challenge: challengeOf("v".repeat(50)), code_challenge_method: "S256", state: "s1", scope: "mcp:read mcp:write", resource: mcpResourceUrl(TEST_PUBLIC_URL) });
    const ctx = { db: handle.db, publicUrl: TEST_PUBLIC_URL, adminHost: "localhost", resolver: clientResolver([]), knownTools: knownToolNames() };
    const begun = await beginAuthorization(ctx, query, { adminId: owner.admin.id, username: owner.admin.username });
    if (begun.kind !== "consent") throw new Error(JSON.stringify(begun));
    const decision = { handle: begun.pending.handle, approve: true, readOnly: false, tools: null, hosts: null, lifetimeS: 3600 };
    return { ...owner, decision };
  }

  /** The stored request behind a consent handle (its row id is the handle's sha256). */
  async function requestOf(handle: DatabaseHandle, consentHandle: string) {
    const id = createHash("sha256").update(consentHandle, "utf8").digest("hex");
    const [row] = await handle.db.select({ decidedAt: oauthAuthorizations.decidedAt, outcome: oauthAuthorizations.outcome }).from(oauthAuthorizations).where(eq(oauthAuthorizations.id, id));
    return row;
  }

  it("approving needs the owner's password in the same call, even right after signing in: none or a wrong one is FORBIDDEN and leaves the request pending; the right one approves", async () => {
    const { handle } = database();
    const { caller, decision } = await ownerWithRequest(handle);
    expect(await requestOf(handle, decision.handle)).toEqual({ decidedAt: null, outcome: null });
    const none = await refusal(caller.oauth.decide(decision));
    expect(none.code).toBe("FORBIDDEN");
    expect(none.message).toContain("password");
    const wrong = await refusal(caller.oauth.decide({ ...decision, password: "not the password" }));
    expect(wrong.code).toBe("FORBIDDEN");
    expect(wrong.message).toContain("password is wrong");
    expect(await requestOf(handle, decision.handle)).toEqual({ decidedAt: null, outcome: null });
    const approved = await caller.oauth.decide({ ...decision, password: PASSWORD });
    const location = new URL(approved.location);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get("code")).toMatch(/.{20,}/);
    expect((await requestOf(handle, decision.handle))?.outcome).toBe("granted");
  });

  it("denying needs no password and no fresh sign-in: a session past its password proof denies, and the client hears access_denied", async () => {
    const { handle } = database();
    const { caller, decision } = await ownerWithRequest(handle, { stale: true });
    const denied = await caller.oauth.decide({ ...decision, approve: false });
    expect(new URL(denied.location).searchParams.get("error")).toBe("access_denied");
  });

  it("turning dynamic registration on or off and removing a client need re-authentication: a stale session is refused and nothing changes", async () => {
    const { handle } = database();
    const { caller, admin } = await adminCaller(handle, "owner", { stale: true });
    const before = await getOAuthSettings(handle.db);
    const settings = await refusal(caller.oauth.setSettings({ dynamicRegistration: !before.dynamicRegistration }));
    expect([settings.code, settings.hint]).toEqual(["FORBIDDEN", "reauthenticate"]);
    expect(await getOAuthSettings(handle.db)).toEqual(before);
    const client = await registerClientByAdmin(handle.db, { name: "Keep me", redirectUris: [REDIRECT] }, admin.id, "localhost");
    const removal = await refusal(caller.oauth.removeClient({ id: client.id }));
    expect([removal.code, removal.hint]).toEqual(["FORBIDDEN", "reauthenticate"]);
    expect(await findClient(handle.db, client.id)).toBeDefined();
  });

  it("registerClient refuses a redirect URI on the admin URL's host name (http://localhost:PORT here) and a name with an invisible character", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "owner");
    expect(new URL(TEST_PUBLIC_URL).hostname).toBe("localhost");
    const onAdminHost = await refusal(caller.oauth.registerClient({ name: "Thief", redirectUris: ["http://localhost:9999/callback"] }));
    expect(onAdminHost.code).toBe("INVALID_ARGUMENT");
    expect(onAdminHost.message).toContain("admin pages");
    expect((await refusal(caller.oauth.registerClient({ name: "Claude\u200b Code", redirectUris: [REDIRECT] }))).code).toBe("INVALID_ARGUMENT");
    expect(await caller.oauth.registerClient({ name: "Fine", redirectUris: [REDIRECT] })).toMatchObject({ name: "Fine" });
  });
});
