/**
 * The guest's artifact route, served by `serveArtifact`
 * behind a real HTTP listener and read by the guest's own HubClient and
 * fetchJobArtifact: signed GETs, raw bytes with the artifact's SHA-256 and
 * size, and hostile cases — another host's job, a finished job, a job whose
 * action names no artifact, ranges out of bounds, a bad signature.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fetchJobArtifact } from "../../agent-guest/daemon/artifact-fetch";
import { HubClient, HubError } from "../../agent-guest/daemon/client";
import { describeEachDatabase } from "../../test/support/databases";
import { uniqueName } from "../../test/pipeline/support";
import { sha256Hex, storeArtifact } from "../artifacts";
import type { Database } from "../db";
import { actions, hosts, jobs } from "../db/schema";
import type { HubRuntime } from "../hub/runtime";
import { serveArtifact } from "./http";

describeEachDatabase("GET /api/agent/jobs/<id>/artifact", (db) => {
  let server: Server;
  let base = "";
  const data = randomBytes(4 * 1024 * 1024 + 4321);
  const sha256 = sha256Hex(data);
  const dir = mkdtempSync(path.join(tmpdir(), "lh-artifact-route-"));

  beforeAll(async () => {
    await storeArtifact(db().handle.db, { kind: "token", id: randomUUID() }, data, { maxBytes: 64 << 20, quotaBytes: 64 << 20, idleMs: 3600_000, retentionMs: 3600_000 });
    const runtime = { database: { handle: db().handle } } as unknown as HubRuntime;
    server = createServer((req, res) => {
      const match = /^\/api\/agent\/jobs\/([^/?]+)\/artifact(?:\?|$)/.exec(req.url ?? "");
      const request = new Request(`http://hub${req.url}`, { method: req.method, headers: req.headers as Record<string, string> });
      void serveArtifact(runtime, request, decodeURIComponent(match?.[1] ?? "")).then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function enrolledHost(d: Database) {
    const keys = generateKeyPairSync("ed25519");
    const [host] = await d.insert(hosts).values({ name: uniqueName("host"), publicKey: keys.publicKey.export({ type: "spki", format: "pem" }).toString() }).returning();
    return { id: host!.id, client: new HubClient(base, host!.id, keys.privateKey) };
  }

  async function job(d: Database, hostId: string, options: { state?: string; artifact?: unknown } = {}): Promise<string> {
    const actionId = randomUUID();
    const jobId = randomUUID();
    const args = options.artifact === undefined ? { artifact: { sha256, bytes: data.length } } : options.artifact === null ? {} : { artifact: options.artifact };
    await d.insert(actions).values({ id: actionId, channel: "mcp", callerKey: "token:x", operation: "apk_inspect", capabilityId: "apk-static", hostId, actionHash: "sha256:x", prepared: { arguments: args }, riskLevel: "read_only", state: "dispatched" });
    await d.insert(jobs).values({ id: jobId, actionId, hostId, payload: { action: { arguments: args } }, signature: "x", state: options.state ?? "claimed", deadline: new Date(Date.now() + 60_000) });
    return jobId;
  }

  const statusOf = async (p: Promise<unknown>) => {
    try {
      await p;
      return "OK";
    } catch (error) {
      return error instanceof HubError ? `${error.status} ${error.payload?.code}` : String(error);
    }
  };

  it("serves a claimed job's artifact in raw ranges the guest writes out whole and verified", async () => {
    const host = await enrolledHost(db().handle.db);
    const jobId = await job(db().handle.db, host.id);
    const range = await host.client.requestBytes(`/api/agent/jobs/${jobId}/artifact?offset=10&length=20`, { maxBytes: 20 });
    expect(range.headers.get("content-type")).toBe("application/octet-stream");
    expect(range.headers.get("x-leasehold-artifact-sha256")).toBe(sha256);
    expect(range.headers.get("x-leasehold-artifact-bytes")).toBe(String(data.length));
    expect(range.bytes.equals(data.subarray(10, 30))).toBe(true);
    // The tail is cut at the artifact's end.
    expect((await host.client.requestBytes(`/api/agent/jobs/${jobId}/artifact?offset=${data.length - 5}&length=100`, { maxBytes: 100 })).bytes.length).toBe(5);
    const file = path.join(dir, "whole");
    const fd = openSync(file, "w+", 0o600);
    await fetchJobArtifact(host.client, jobId, { sha256, bytes: data.length }, fd);
    closeSync(fd);
    expect(readFileSync(file).equals(data)).toBe(true);
  });

  it("refuses another host's job (404, like no job), a finished or queued job (403), and a job naming no artifact (404)", async () => {
    const mine = await enrolledHost(db().handle.db);
    const other = await enrolledHost(db().handle.db);
    const theirs = await job(db().handle.db, other.id);
    expect(await statusOf(mine.client.requestBytes(`/api/agent/jobs/${theirs}/artifact?offset=0&length=10`, { maxBytes: 10 }))).toBe("404 NOT_FOUND");
    expect(await statusOf(mine.client.requestBytes(`/api/agent/jobs/${randomUUID()}/artifact?offset=0&length=10`, { maxBytes: 10 }))).toBe("404 NOT_FOUND");
    expect(await statusOf(mine.client.requestBytes(`/api/agent/jobs/not-a-uuid/artifact?offset=0&length=10`, { maxBytes: 10 }))).toBe("404 NOT_FOUND");
    for (const state of ["completed", "failed", "lost", "queued", "cancelled"]) {
      const ended = await job(db().handle.db, mine.id, { state });
      expect(await statusOf(mine.client.requestBytes(`/api/agent/jobs/${ended}/artifact?offset=0&length=10`, { maxBytes: 10 })), state).toBe("403 FORBIDDEN");
    }
    const bare = await job(db().handle.db, mine.id, { artifact: null });
    expect(await statusOf(mine.client.requestBytes(`/api/agent/jobs/${bare}/artifact?offset=0&length=10`, { maxBytes: 10 }))).toBe("404 NOT_FOUND");
    // A job that names an artifact the hub does not hold (never uploaded, or reclaimed).
    const missing = await job(db().handle.db, mine.id, { artifact: { sha256: "c".repeat(64), bytes: 5 } });
    expect(await statusOf(mine.client.requestBytes(`/api/agent/jobs/${missing}/artifact?offset=0&length=5`, { maxBytes: 5 }))).toBe("404 NOT_FOUND");
    // The job ending mid-fetch ends the fetch.
    const running = await job(db().handle.db, mine.id);
    await db().handle.db.update(jobs).set({ state: "completed" }).where(eq(jobs.id, running));
    const fd = openSync(path.join(dir, "ended"), "w+", 0o600);
    await expect(fetchJobArtifact(mine.client, running, { sha256, bytes: data.length }, fd)).rejects.toMatchObject({ code: "FORBIDDEN" });
    closeSync(fd);
  });

  it("refuses ranges out of bounds and malformed parameters with 400", async () => {
    const host = await enrolledHost(db().handle.db);
    const jobId = await job(db().handle.db, host.id);
    for (const query of [`offset=${data.length}&length=1`, "offset=0&length=0", `offset=0&length=${4 * 1024 * 1024 + 1}`, "offset=-1&length=1", "offset=01&length=1", "offset=0", "length=1", "offset=0&offset=1&length=1", "offset=1e3&length=1", "offset=0&length=1.5"]) {
      expect(await statusOf(host.client.requestBytes(`/api/agent/jobs/${jobId}/artifact?${query}`, { maxBytes: 10 })), query).toBe("400 INVALID_ARGUMENT");
    }
  });

  it("refuses a bad signature, a replayed nonce and an unknown host with 401", async () => {
    const host = await enrolledHost(db().handle.db);
    const jobId = await job(db().handle.db, host.id);
    const impostor = new HubClient(base, host.id, generateKeyPairSync("ed25519").privateKey);
    expect(await statusOf(impostor.requestBytes(`/api/agent/jobs/${jobId}/artifact?offset=0&length=10`, { maxBytes: 10 }))).toBe("401 UNAUTHENTICATED");
    const unknown = new HubClient(base, randomUUID(), generateKeyPairSync("ed25519").privateKey);
    expect(await statusOf(unknown.requestBytes(`/api/agent/jobs/${jobId}/artifact?offset=0&length=10`, { maxBytes: 10 }))).toBe("401 UNAUTHENTICATED");
    const unsigned = await fetch(`${base}/api/agent/jobs/${jobId}/artifact?offset=0&length=10`);
    expect(unsigned.status).toBe(401);
    // A signed request for one range does not cover another (the signature is over path and query).
    const signedHeaders: Record<string, string> = {};
    const original = globalThis.fetch;
    globalThis.fetch = ((url: string, init: RequestInit) => {
      Object.assign(signedHeaders, init.headers);
      return original(url, init);
    }) as typeof fetch;
    try {
      await host.client.requestBytes(`/api/agent/jobs/${jobId}/artifact?offset=0&length=10`, { maxBytes: 10 });
    } finally {
      globalThis.fetch = original;
    }
    const replayed = await fetch(`${base}/api/agent/jobs/${jobId}/artifact?offset=0&length=10`, { headers: signedHeaders });
    expect(replayed.status).toBe(401);
    const moved = await fetch(`${base}/api/agent/jobs/${jobId}/artifact?offset=10&length=10`, { headers: signedHeaders });
    expect(moved.status).toBe(401);
  });
});
