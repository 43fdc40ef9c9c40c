/**
 * Every step that changes how an account signs in or signs is re-proven by a
 * person: adding or removing a passkey needs a recent password
 * re-authentication; adding one beside an existing passkey needs that
 * passkey's assertion in the same ceremony; additions are announced on the
 * webhook; an owner's password reset (account recovery) removes every
 * passkey of the account, a user's own password change keeps them.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { afterEach, expect, it } from "vitest";
import { allEntries } from "../../test/pipeline/support";
import { describeEachDatabase } from "../../test/support/databases";
import { changeOwnPassword, createAdminSession, hashPassword, resetAdminPassword, type AdminRole } from "../admins";
import type { DatabaseHandle } from "../db";
import { adminSessions, adminUsers, passkeyCredentials } from "../db/schema";
import type { HubRuntime } from "../hub/runtime";
import { hashActor } from "../ledger/entry";
import { appRouter } from "../trpc/root";
import { refusal, sessionHeaders } from "../trpc/routers/test-callers";
import { listPasskeys, signInOptions, signInWithPasskey } from "./passkeys";
import { SoftAuthenticator } from "./test-authenticator";

const ORIGIN = "http://localhost:8700";
const SECRET = "passkey-webhook-secret-0123456789";

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function receiver(): Promise<{ url: string; received: Array<{ body: string; signature: string | undefined }> }> {
  const received: Array<{ body: string; signature: string | undefined }> = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), signature: req.headers["x-leasehold-signature"] as string | undefined });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

async function hub(handle: DatabaseHandle, role: AdminRole, options: { stale?: boolean; webhook?: { url: string; secret: string } } = {}) {
  const runtime = {
    database: { handle },
    config: { publicUrl: ORIGIN, host: "127.0.0.1", port: 8700, passkeyApprovalRisk: "high", dataDir: "/nonexistent", webhook: options.webhook ?? null },
  } as unknown as HubRuntime;
  const password = "correct horse battery staple 42";
  const [row] = await handle.db.insert(adminUsers).values({ username: `pk-${role}-${Math.random().toString(36).slice(2, 10)}`, passwordHash: await hashPassword(password), role }).returning();
  const session = await createAdminSession(handle.db, row!.id);
  if (options.stale === true) await handle.db.update(adminSessions).set({ reauthenticatedAt: new Date(Date.now() - 3600_000) }).where(eq(adminSessions.id, session.sessionId));
  const caller = appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config, { origin: ORIGIN }) });
  return { admin: { id: row!.id, username: row!.username }, caller, password, sessionId: session.sessionId };
}

type Caller = Awaited<ReturnType<typeof hub>>["caller"];

async function addFirst(caller: Caller, name = "first"): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator();
  const ceremony = await caller.passkeys.registrationOptions();
  expect(ceremony.confirmWith).toBeNull();
  await caller.passkeys.register({ name, response: { ...(await authenticator.register(ceremony.options, ORIGIN)), clientExtensionResults: {} } });
  return authenticator;
}

const ext = <T extends object>(r: T) => ({ ...r, clientExtensionResults: {} as Record<string, unknown> });

describeEachDatabase("passkeys: adding and removing one is re-proven", (database) => {
  it("hostile: a session past its re-authentication window can neither start nor finish a registration, nor remove a passkey", async () => {
    const { handle } = database();
    const fresh = await hub(handle, "approver");
    await addFirst(fresh.caller);
    const [mine] = await listPasskeys(handle.db, fresh.admin.id);
    await handle.db.update(adminSessions).set({ reauthenticatedAt: new Date(Date.now() - 3600_000) }).where(eq(adminSessions.id, fresh.sessionId));
    expect(await refusal(fresh.caller.passkeys.registrationOptions())).toMatchObject({ code: "FORBIDDEN", hint: "reauthenticate" });
    expect(await refusal(fresh.caller.passkeys.remove({ id: mine!.id }))).toMatchObject({ code: "FORBIDDEN", hint: "reauthenticate" });
    const stale = await hub(handle, "auditor", { stale: true });
    const authenticator = new SoftAuthenticator();
    const forged = await authenticator.register(
      { challenge: "AAAA", rp: { id: "localhost", name: "Leasehold" }, user: { id: "AAAA", name: "x", displayName: "x" }, pubKeyCredParams: [{ type: "public-key", alg: -7 }] },
      ORIGIN,
    );
    expect(await refusal(stale.caller.passkeys.register({ name: "planted", response: ext(forged) }))).toMatchObject({ code: "FORBIDDEN", hint: "reauthenticate" });
    expect((await listPasskeys(handle.db, fresh.admin.id)).length).toBe(1);
  });

  it("hostile: a second passkey needs an existing passkey's assertion over this very ceremony; without it, with another ceremony's or another account's, nothing is added", async () => {
    const { handle } = database();
    const { admin, caller } = await hub(handle, "owner");
    const first = await addFirst(caller);
    const second = new SoftAuthenticator();

    const ceremony = await caller.passkeys.registrationOptions();
    expect(ceremony.confirmWith?.allowCredentials?.map((c) => c.id)).toEqual([first.credentialId]);
    const bare = await refusal(caller.passkeys.register({ name: "second", response: ext(await second.register(ceremony.options, ORIGIN)) }));
    expect(bare.code).toBe("FORBIDDEN");
    expect(bare.message).toContain("confirm the new one with an existing passkey");

    // The consent of one ceremony does not confirm another.
    const a = await caller.passkeys.registrationOptions();
    const b = await caller.passkeys.registrationOptions();
    const consentForA = ext(await first.assert(a.confirmWith!, ORIGIN));
    const crossed = await refusal(caller.passkeys.register({ name: "second", response: ext(await second.register(b.options, ORIGIN)), confirmation: consentForA }));
    expect(crossed.message).toContain("made for another passkey registration");

    // Another account's passkey answering this account's consent challenge.
    const stranger = await hub(handle, "owner");
    const strangerKey = await addFirst(stranger.caller);
    const c = await caller.passkeys.registrationOptions();
    const foreign = await refusal(caller.passkeys.register({ name: "second", response: ext(await second.register(c.options, ORIGIN)), confirmation: ext(await strangerKey.assert(c.confirmWith!, ORIGIN)) }));
    expect(foreign.message).toContain("belongs to another account");
    expect((await listPasskeys(handle.db, admin.id)).map((p) => p.name)).toEqual(["first"]);

    const d = await caller.passkeys.registrationOptions();
    const added = await caller.passkeys.register({ name: "second", response: ext(await second.register(d.options, ORIGIN)), confirmation: ext(await first.assert(d.confirmWith!, ORIGIN)) });
    expect(added.name).toBe("second");
    expect((await listPasskeys(handle.db, admin.id)).map((p) => p.name)).toEqual(["first", "second"]);
  });

  it("each addition is announced on the webhook as passkey.added, signed with the hub's secret, naming the account and when", async () => {
    const { handle } = database();
    const { url, received } = await receiver();
    const { admin, caller } = await hub(handle, "approver", { webhook: { url, secret: SECRET } });
    await addFirst(caller, "laptop");
    for (let i = 0; i < 100 && received.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(received).toHaveLength(1);
    const body = JSON.parse(received[0]!.body) as Record<string, string>;
    const [row] = await handle.db.select().from(passkeyCredentials).where(eq(passkeyCredentials.userId, admin.id));
    expect(body).toEqual({ type: "passkey.added", admin: admin.username, passkey_name: "laptop", credential_id: row!.credentialId, added_at: row!.createdAt.toISOString(), url: `${ORIGIN}/account` });
    expect(received[0]!.signature).toBe(`sha256=${createHmac("sha256", SECRET).update(received[0]!.body).digest("hex")}`);
  });

  it("hostile: an owner's password reset is account recovery — every passkey of that admin is removed (sealed, kept) and can no longer sign in; the admin's own password change keeps them", async () => {
    const { handle } = database();
    const victim = await hub(handle, "approver");
    const planted = await addFirst(victim.caller, "planted");
    // Own password change: passkeys stay (and the account page lists them).
    await changeOwnPassword(handle.db, { adminId: victim.admin.id, sessionId: victim.sessionId, current: victim.password, next: "another long passphrase 7" });
    expect((await victim.caller.passkeys.list()).passkeys.map((p) => p.name)).toEqual(["planted"]);

    const owner = await hub(handle, "owner");
    const reset = await owner.caller.users.resetPassword({ name: victim.admin.username });
    expect(reset.oneTimePassword.length).toBeGreaterThan(10);
    expect(await listPasskeys(handle.db, victim.admin.id)).toEqual([]);
    const kept = await handle.db.select().from(passkeyCredentials).where(and(eq(passkeyCredentials.userId, victim.admin.id)));
    expect(kept).toHaveLength(1);
    expect(kept[0]!.removedAt).not.toBeNull();
    const removals = (await allEntries(handle.db)).filter((e) => e.type === "admin/1" && e.data.operation === "passkey.remove" && e.data.target_digest === hashActor("admin", victim.admin.id));
    expect(removals.map((e) => e.actor)).toEqual([hashActor("admin", owner.admin.id)]);
    const settings = { publicUrl: ORIGIN, host: "127.0.0.1", port: 8700, passkeyApprovalRisk: "high" as const };
    const signIn = await signInOptions(handle.db, settings, ORIGIN);
    await expect(signInWithPasskey(handle.db, await planted.assert(signIn, ORIGIN), settings, ORIGIN)).rejects.toThrow("removed");
    // The CLI path (leasehold admin password) is the same function.
    const again = await hub(handle, "approver");
    await addFirst(again.caller);
    expect((await resetAdminPassword(handle.db, again.admin.username, { kind: "system", id: "cli" })).passkeysRemoved).toBe(1);
    expect(await listPasskeys(handle.db, again.admin.id)).toEqual([]);
  });
});
