/**
 * Web Push end to end against a push service of the test's own: an HTTP
 * server on 127.0.0.1 that does what a browser's push service and the
 * browser do between them — checks the VAPID JWT (RFC 8292) against the
 * key the subscription was made with, and decrypts the body (RFC 8291,
 * aes128gcm) with the subscription's private key. Its decryption is written
 * from the RFC with HMAC-SHA-256 directly, not with the hub's HKDF calls.
 */
import { createDecipheriv, createECDH, createHmac, createPublicKey, verify, type ECDH } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { actionPipelineFor, submitAction } from "../actions";
import { createAdminSession, type AdminRole } from "../admins";
import type { DatabaseHandle } from "../db";
import { adminUsers, pushSubscriptions } from "../db/schema";
import type { HubRuntime } from "../hub/runtime";
import { appRouter } from "../trpc/root";
import { sessionHeaders } from "../trpc/routers/test-callers";
import { describeEachDatabase } from "../../test/support/databases";
import { rejectionOf } from "../../test/support/refusals";
import { insertHost, insertToken, readyForTests, uniqueName } from "../../test/pipeline/support";
import { encryptPushPayload, MAX_PLAINTEXT_BYTES } from "./encrypt";
import { createPushNotifier, type PushPayload } from "./notifier";
import { saveSubscription } from "./subscriptions";
import { generateVapidKey, loadOrCreateVapidKey, vapidAuthorization, VAPID_KEY_FILE } from "./vapid";

const hmac = (key: Buffer, data: Buffer): Buffer => createHmac("sha256", key).update(data).digest();

/** A browser's side of one subscription: its key pair and auth secret. */
function browserKeys(): { ecdh: ECDH; auth: Buffer; p256dh: string; authText: string } {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const auth = Buffer.from(Array.from({ length: 16 }, (_, i) => (i * 37 + 11) & 0xff));
  return { ecdh, auth, p256dh: ecdh.getPublicKey().toString("base64url"), authText: auth.toString("base64url") };
}

/** RFC 8291 §3.3–3.4 and RFC 8188 §2, the receiving side. */
function decrypt(body: Buffer, ua: ECDH, auth: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const recordSize = body.readUInt32BE(16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  if (idlen !== 65 || record.length > recordSize) throw new Error(`bad header: idlen ${idlen}, record ${record.length} > rs ${recordSize}`);
  const shared = ua.computeSecret(asPublic);
  const prkKey = hmac(auth, shared);
  const ikm = hmac(prkKey, Buffer.concat([Buffer.from("WebPush: info\0"), ua.getPublicKey(), asPublic, Buffer.from([1])]));
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from("Content-Encoding: aes128gcm\0\x01")).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from("Content-Encoding: nonce\0\x01")).subarray(0, 12);
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  if (padded[end] !== 0x02) throw new Error("last record must end in the 0x02 delimiter");
  return padded.subarray(0, end);
}

/** RFC 8292: `vapid t=<JWT>, k=<key>`; the JWT verified with k, which must be the key the browser subscribed with. */
function checkVapid(header: string | undefined, expectedKey: string, audience: string): Record<string, unknown> {
  const match = /^vapid t=([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+), k=([A-Za-z0-9_-]+)$/.exec(header ?? "");
  if (match === null) throw new Error(`not a vapid Authorization header: ${header}`);
  const [, head, claims, signature, k] = match as unknown as [string, string, string, string, string];
  if (k !== expectedKey) throw new Error("k is not the subscription's applicationServerKey");
  const point = Buffer.from(k, "base64url");
  const key = createPublicKey({ key: { kty: "EC", crv: "P-256", x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33).toString("base64url") }, format: "jwk" });
  if (!verify("sha256", Buffer.from(`${head}.${claims}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url"))) throw new Error("VAPID signature does not verify");
  expect(JSON.parse(Buffer.from(head, "base64url").toString())).toEqual({ typ: "JWT", alg: "ES256" });
  const body = JSON.parse(Buffer.from(claims, "base64url").toString()) as Record<string, unknown>;
  if (body.aud !== audience) throw new Error(`aud ${String(body.aud)} is not ${audience}`);
  const exp = Number(body.exp);
  if (!(exp > Date.now() / 1000 && exp <= Date.now() / 1000 + 24 * 3600)) throw new Error("exp is not within 24 h");
  return body;
}

interface Pushed {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** The push service: records each message and answers `status`. */
async function pushService(status: number): Promise<{ origin: string; pushed: Pushed[]; next: () => Promise<Pushed> }> {
  const pushed: Pushed[] = [];
  const waiters: Array<(p: Pushed) => void> = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const message = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) };
      pushed.push(message);
      res.writeHead(status).end();
      waiters.shift()?.(message);
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, pushed, next: () => new Promise<Pushed>((resolve) => waiters.push(resolve)) };
}

describe("push message encryption and VAPID", () => {
  it("a payload encrypted to a browser's keys decrypts with its private key and the auth secret, and with no other", () => {
    const browser = browserKeys();
    const plaintext = Buffer.from(JSON.stringify({ hello: "approver", n: "é✓" }));
    const body = encryptPushPayload(plaintext, { p256dh: browser.ecdh.getPublicKey(), auth: browser.auth });
    expect(body.readUInt32BE(16)).toBe(4096);
    expect(decrypt(body, browser.ecdh, browser.auth).equals(plaintext)).toBe(true);
    // Another browser's key, or another auth secret: the tag does not verify.
    expect(() => decrypt(body, browserKeys().ecdh, browser.auth)).toThrow();
    expect(() => decrypt(body, browser.ecdh, Buffer.alloc(16, 1))).toThrow();
    // A fresh sender key and salt per message: the same plaintext never gives the same body.
    expect(encryptPushPayload(plaintext, { p256dh: browser.ecdh.getPublicKey(), auth: browser.auth }).equals(body)).toBe(false);
  });

  it("refuses what a push service would refuse or a browser could not decrypt: an oversize payload, a bad point, a short auth secret", () => {
    const browser = browserKeys();
    const keys = { p256dh: browser.ecdh.getPublicKey(), auth: browser.auth };
    expect(() => encryptPushPayload(Buffer.alloc(MAX_PLAINTEXT_BYTES), keys)).not.toThrow();
    expect(() => encryptPushPayload(Buffer.alloc(MAX_PLAINTEXT_BYTES + 1), keys)).toThrow(/at most/);
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]);
    expect(() => encryptPushPayload(Buffer.from("x"), { ...keys, p256dh: offCurve })).toThrow();
    expect(() => encryptPushPayload(Buffer.from("x"), { ...keys, p256dh: keys.p256dh.subarray(0, 33) })).toThrow(/uncompressed/);
    expect(() => encryptPushPayload(Buffer.from("x"), { ...keys, auth: Buffer.alloc(8) })).toThrow(/16 bytes/);
  });

  it("the VAPID header verifies with the public key, names the endpoint's origin, and expires within 24 h; another key's header does not pass", () => {
    const key = generateVapidKey();
    const header = vapidAuthorization(key, "https://push.example:8443/send/abc?x=1", "https://hub.example", new Date());
    expect(checkVapid(header, key.publicKey, "https://push.example:8443")).toMatchObject({ sub: "https://hub.example" });
    expect(() => checkVapid(header, generateVapidKey().publicKey, "https://push.example:8443")).toThrow(/applicationServerKey/);
    const forged = header.replace(/k=.*$/, `k=${generateVapidKey().publicKey}`);
    expect(() => checkVapid(forged, forged.split("k=")[1]!, "https://push.example:8443")).toThrow(/does not verify/);
  });

  it("the key is created once in the key directory, 0600, and read back the same", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "lh-vapid-"));
    try {
      const first = loadOrCreateVapidKey(dir);
      expect(statSync(path.join(dir, VAPID_KEY_FILE)).mode & 0o777).toBe(0o600);
      expect(loadOrCreateVapidKey(dir).publicKey).toBe(first.publicKey);
      expect(Buffer.from(first.publicKey, "base64url")).toHaveLength(65);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function adminWith(handle: DatabaseHandle, role: AdminRole, disabled = false): Promise<string> {
  const [row] = await handle.db
    .insert(adminUsers)
    .values({ username: uniqueName(role), passwordHash: "unused", role, ...(disabled ? { disabledAt: new Date() } : {}) })
    .returning({ id: adminUsers.id });
  return row!.id;
}

describeEachDatabase("Web Push for held actions", (db) => {
  /** A runtime as the hub builds it, its pipeline wired by actionPipelineFor (webhook off, push on). */
  function hubRuntime(handle: DatabaseHandle, keyDir: string): HubRuntime {
    return {
      database: { handle },
      config: { publicUrl: "http://localhost:8700", dataDir: keyDir, mcp: { maxHeldPerToken: 20 } },
      ledger: { integrator: undefined },
    } as unknown as HubRuntime;
  }

  it("a held action is pushed to each decider's browser: VAPID checked, decrypted it names the command and the card's URL; auditors and disabled admins get nothing; 410 from the push service removes the subscription", async () => {
    const { handle } = db();
    const keyDir = mkdtempSync(path.join(tmpdir(), "lh-push-"));
    try {
      const service = await pushService(201);
      const vapid = loadOrCreateVapidKey(keyDir);
      const approver = browserKeys();
      const subscribe = async (role: AdminRole, keys: ReturnType<typeof browserKeys>, name: string, disabled = false) =>
        saveSubscription(handle.db, await adminWith(handle, role, disabled), { endpoint: `${service.origin}/push/${name}`, keys: { p256dh: keys.p256dh, auth: keys.authText }, label: name }, vapid.keyId);
      const approverPath = `approver-${uniqueName("b")}`;
      const mine = await subscribe("approver", approver, approverPath);
      const auditorPath = `auditor-${uniqueName("b")}`;
      const disabledPath = `disabled-${uniqueName("b")}`;
      await subscribe("auditor", browserKeys(), auditorPath);
      await subscribe("owner", browserKeys(), disabledPath, true);

      const runtime = hubRuntime(handle, keyDir);
      const deps = { ...actionPipelineFor(runtime).deps, readiness: readyForTests };
      const host = await insertHost(handle.db);
      const token = await insertToken(handle.db);
      const arrived = service.next();
      const command = `chmod -f 600 lh-push-${uniqueName("x")}; echo pushed`;
      const held = await rejectionOf(submitAction(deps, token, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 }));
      expect(held.code).toBe("APPROVAL_PENDING");
      const approvalId = String(held.details?.["approval_id"]);
      // Other cases' deciders may be subscribed too (one database per file): wait for this browser's message.
      let message = await arrived;
      while (message.path !== `/push/${approverPath}`) message = await service.next();
      checkVapid(message.headers.authorization, vapid.publicKey, service.origin);
      expect(message.headers["content-encoding"]).toBe("aes128gcm");
      expect(message.headers.urgency).toBe("high");
      expect(Number(message.headers.ttl)).toBeGreaterThan(200);
      const payload = JSON.parse(decrypt(message.body, approver.ecdh, approver.auth).toString("utf8")) as PushPayload;
      expect(payload).toEqual({
        type: "approval.requested",
        approval_id: approvalId,
        action_id: String(held.details?.["action_id"]),
        title: `Approval needed: run_command on ${host.name}`,
        body: expect.stringContaining(command),
        url: `http://localhost:8700/approvals#${approvalId}`,
      });
      // Give every delivery of this notice time to land, then look at who got one.
      for (let i = 0; i < 100 && (await handle.db.select().from(pushSubscriptions).where(eq(pushSubscriptions.id, mine.id)))[0]?.lastSentAt == null; i += 1) await new Promise((r) => setTimeout(r, 20));
      expect(service.pushed.some((p) => p.path.includes(auditorPath) || p.path.includes(disabledPath))).toBe(false);

      // The browser unsubscribed: the push service answers 410 and the hub forgets the subscription.
      const gone = await pushService(410);
      const leaving = browserKeys();
      const stale = await saveSubscription(handle.db, await adminWith(handle, "approver"), { endpoint: `${gone.origin}/push/gone`, keys: { p256dh: leaving.p256dh, auth: leaving.authText }, label: "gone" }, vapid.keyId);
      const logs: string[] = [];
      const notifier = createPushNotifier({ db: handle.db, vapid, publicUrl: "http://localhost:8700", log: (l) => logs.push(l) });
      const outcomes = await notifier.notify({ approvalId, actionId: String(held.details?.["action_id"]), host: host.name, operation: "run_command", risk: "medium", deadline: new Date(Date.now() + 60_000) });
      expect(outcomes).toContain("pruned");
      expect(gone.pushed.map((p) => p.path)).toEqual(["/push/gone"]);
      expect(await handle.db.select().from(pushSubscriptions).where(eq(pushSubscriptions.id, stale.id))).toEqual([]);
      expect(logs.some((l) => /answered 410 .*subscription removed/.test(l))).toBe(true);
    } finally {
      rmSync(keyDir, { recursive: true, force: true });
    }
  });

  it("a subscription made with another VAPID key is not sent to, and the log says which key to share", async () => {
    const { handle } = db();
    const service = await pushService(201);
    const browser = browserKeys();
    const other = generateVapidKey();
    const sub = await saveSubscription(handle.db, await adminWith(handle, "approver"), { endpoint: `${service.origin}/push/other-key`, keys: { p256dh: browser.p256dh, auth: browser.authText }, label: "other" }, other.keyId);
    const logs: string[] = [];
    const notifier = createPushNotifier({ db: handle.db, vapid: generateVapidKey(), publicUrl: "http://localhost:8700", log: (l) => logs.push(l) });
    await notifier.notify({ approvalId: "11111111-1111-4111-8111-111111111111", actionId: "22222222-2222-4222-8222-222222222222", host: "h", operation: "run_command", risk: "low", deadline: new Date(Date.now() + 60_000) });
    expect(service.pushed.filter((p) => p.path === "/push/other-key")).toEqual([]);
    expect(logs.some((l) => l.includes(`subscription ${sub.id} was made with VAPID key ${other.keyId}`))).toBe(true);
  });

  it("push.subscribe takes only https endpoints without credentials and well-formed keys; each admin lists and removes only their own; auditors are refused", async () => {
    const { handle } = db();
    const keyDir = mkdtempSync(path.join(tmpdir(), "lh-push-router-"));
    try {
      const runtime = hubRuntime(handle, keyDir);
      const callerFor = async (role: AdminRole) => {
        const session = await createAdminSession(handle.db, await adminWith(handle, role));
        return appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config) });
      };
      const alice = await callerFor("approver");
      const bob = await callerFor("owner");
      const auditor = await callerFor("auditor");
      const browser = browserKeys();
      const good = { endpoint: `https://push.example/send/${uniqueName("e")}`, keys: { p256dh: browser.p256dh, auth: browser.authText }, label: "Firefox on Linux" };
      const listed = await alice.push.list();
      expect(Buffer.from(listed.publicKey, "base64url")).toHaveLength(65);
      expect(listed.subscriptions).toEqual([]);
      for (const bad of [
        { ...good, endpoint: "http://push.example/send/x" },
        { ...good, endpoint: "https://user:pw@push.example/send/x" },
        { ...good, endpoint: "file:///etc/passwd" },
        { ...good, endpoint: "not a url" },
        { ...good, keys: { ...good.keys, p256dh: browser.p256dh.slice(0, 40) } },
        { ...good, keys: { ...good.keys, p256dh: Buffer.alloc(65, 3).toString("base64url") } },
        { ...good, keys: { ...good.keys, auth: "c2hvcnQ" } },
        { ...good, label: "" },
      ]) {
        await expect(alice.push.subscribe(bad), JSON.stringify(bad)).rejects.toThrow();
      }
      const { id } = await alice.push.subscribe(good);
      expect((await alice.push.list()).subscriptions).toEqual([{ id, endpointOrigin: "https://push.example", label: "Firefox on Linux", createdAt: expect.any(String), lastSentAt: null }]);
      expect((await bob.push.list()).subscriptions).toEqual([]);
      await expect(bob.push.unsubscribe({ id })).rejects.toThrow(/no such push subscription/);
      await expect(bob.push.unsubscribe({ endpoint: good.endpoint })).rejects.toThrow(/no such push subscription/);
      await expect(auditor.push.list()).rejects.toMatchObject({ code: "FORBIDDEN" });
      await expect(auditor.push.subscribe(good)).rejects.toMatchObject({ code: "FORBIDDEN" });
      expect(await alice.push.unsubscribe({ endpoint: good.endpoint })).toEqual({ removed: true });
      expect((await alice.push.list()).subscriptions).toEqual([]);
    } finally {
      rmSync(keyDir, { recursive: true, force: true });
    }
  });
});
