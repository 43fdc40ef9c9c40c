import { generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { hosts } from "../db/schema";
import { authenticateHostRequest, recordNonce, type PendingNonce } from "./auth";
import { HEADER_HOST, HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP, MAX_CLOCK_SKEW_MS, requestSigningString, sha256Hex } from "../trust";

function signed(hostId: string, key: KeyObject, input: { method?: string; path?: string; body?: string; time?: number; nonce?: string }) {
  const body = Buffer.from(input.body ?? "");
  const timestamp = String(input.time ?? Date.now());
  const nonce = input.nonce ?? randomBytes(16).toString("hex");
  const message = requestSigningString({ method: input.method ?? "POST", pathAndQuery: input.path ?? "/api/agent/health", timestamp, nonce, bodySha256: sha256Hex(body) });
  const headers = new Headers({ [HEADER_HOST]: hostId, [HEADER_TIMESTAMP]: timestamp, [HEADER_NONCE]: nonce, [HEADER_SIGNATURE]: sign(null, Buffer.from(message), key).toString("base64") });
  return { method: input.method ?? "POST", pathAndQuery: input.path ?? "/api/agent/health", headers, body };
}

describeEachDatabase("signed guest requests", (db) => {
  it("accepts a fresh signed request once and refuses its replay, a changed body, path or method, skew, and another key", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const [host] = await db().handle.db.insert(hosts).values({ name: `h-${randomBytes(3).toString("hex")}`, publicKey: publicKey.export({ type: "spki", format: "pem" }).toString() }).returning();
    const id = host!.id;
    const d = db().handle.db;
    const request = signed(id, privateKey, { body: '{"a":1}' });
    expect(await authenticateHostRequest(d, request)).toMatchObject({ ok: true });
    expect(await authenticateHostRequest(d, request)).toEqual({ ok: false, reason: "replayed request (nonce already used)" });
    const body = signed(id, privateKey, { body: '{"a":1}' });
    expect((await authenticateHostRequest(d, { ...body, body: Buffer.from('{"a":2}') })).ok).toBe(false);
    const p = signed(id, privateKey, {});
    expect((await authenticateHostRequest(d, { ...p, pathAndQuery: "/api/agent/jobs?wait=0" })).ok).toBe(false);
    const m = signed(id, privateKey, {});
    expect((await authenticateHostRequest(d, { ...m, method: "GET" })).ok).toBe(false);
    expect(await authenticateHostRequest(d, signed(id, privateKey, { time: Date.now() - MAX_CLOCK_SKEW_MS - 5_000 }))).toMatchObject({ ok: false, reason: expect.stringMatching(/away from the hub's clock/) });
    const other = generateKeyPairSync("ed25519").privateKey;
    expect(await authenticateHostRequest(d, signed(id, other, {}))).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) });
    const missing = signed(id, privateKey, {});
    missing.headers.delete(HEADER_NONCE);
    expect((await authenticateHostRequest(d, missing)).ok).toBe(false);
  }, 30_000);
  it("hostile: a removed host is refused at once, though its key was verified (and kept parsed) a moment before", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const [host] = await db().handle.db.insert(hosts).values({ name: `h-${randomBytes(3).toString("hex")}`, publicKey: publicKey.export({ type: "spki", format: "pem" }).toString() }).returning();
    const d = db().handle.db;
    expect(await authenticateHostRequest(d, signed(host!.id, privateKey, {}))).toMatchObject({ ok: true });
    await d.update(hosts).set({ removedAt: new Date() }).where(eq(hosts.id, host!.id));
    expect(await authenticateHostRequest(d, signed(host!.id, privateKey, {}))).toEqual({ ok: false, reason: "unknown or removed host" });
  }, 30_000);

  it("deferNonce: a verified request's nonce comes back unrecorded (the handler records it in its own transaction); a bad signature gets none", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const [host] = await db().handle.db.insert(hosts).values({ name: `h-${randomBytes(3).toString("hex")}`, publicKey: publicKey.export({ type: "spki", format: "pem" }).toString() }).returning();
    const d = db().handle.db;
    const request = signed(host!.id, privateKey, { body: "{}" });
    const deferred = await authenticateHostRequest(d, request, Date.now(), { deferNonce: true });
    expect(deferred).toMatchObject({ ok: true, pendingNonce: { hostId: host!.id, nonce: request.headers.get(HEADER_NONCE) } });
    expect(await recordNonce(d, (deferred as { pendingNonce: PendingNonce }).pendingNonce)).toBe(true);
    expect(await authenticateHostRequest(d, request)).toEqual({ ok: false, reason: "replayed request (nonce already used)" });
    const forged = signed(host!.id, generateKeyPairSync("ed25519").privateKey, {});
    expect(await authenticateHostRequest(d, forged, Date.now(), { deferNonce: true })).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) });
  }, 30_000);
});

describe("protocol", () => {
  it("binds every field into the signing string", () => {
    const base = { method: "post", pathAndQuery: "/x?y=1", timestamp: "1700000000000", nonce: "0".repeat(32), bodySha256: sha256Hex("") };
    expect(requestSigningString(base)).toBe(`leasehold-host-request/1\nPOST\n/x?y=1\n1700000000000\n${"0".repeat(32)}\n${sha256Hex("")}`);
  });

});
