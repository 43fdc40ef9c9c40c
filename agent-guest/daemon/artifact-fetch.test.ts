/**
 * The guest's artifact fetcher against a tiny HTTP server that checks the
 * request signature like the hub and serves good, truncated, oversized and
 * wrong bytes, or fails transiently. The real hub route is covered by
 * server/jobs/artifact.test.ts (and its wiring by test/guest when merged).
 */
import { createHash, generateKeyPairSync, randomBytes, verify } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADER_HOST, HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP, requestSigningString, sha256Hex } from "../../server/trust";
import { ARTIFACT_FETCH_RANGE_BYTES, fetchJobArtifact } from "./artifact-fetch";
import { HubClient } from "./client";

const { publicKey, privateKey } = generateKeyPairSync("ed25519");
const data = randomBytes(ARTIFACT_FETCH_RANGE_BYTES * 2 + 777);
const ref = { sha256: createHash("sha256").update(data).digest("hex"), bytes: data.length };

type Mode = "good" | "truncated" | "wrong-bytes" | "wrong-header" | "oversized" | "flaky" | "down" | "not-found" | "finished";
let mode: Mode = "good";
let flakyFailures = 0;
const seen: string[] = [];

function signed(request: IncomingMessage): boolean {
  const h = (name: string) => String(request.headers[name] ?? "");
  const message = requestSigningString({ method: request.method ?? "", pathAndQuery: request.url ?? "", timestamp: h(HEADER_TIMESTAMP), nonce: h(HEADER_NONCE), bodySha256: sha256Hex(Buffer.alloc(0)) });
  return h(HEADER_HOST) === "host-1" && verify(null, Buffer.from(message), publicKey, Buffer.from(h(HEADER_SIGNATURE), "base64"));
}

function answer(request: IncomingMessage, response: ServerResponse): void {
  seen.push(request.url ?? "");
  if (!signed(request)) {
    response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ code: "UNAUTHENTICATED", message: "bad signature" }));
    return;
  }
  const url = new URL(request.url ?? "/", "http://x");
  if (mode === "not-found") return void response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ code: "NOT_FOUND", message: "no such job for this host" }));
  if (mode === "finished") return void response.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ code: "FORBIDDEN", message: "job is completed" }));
  if (mode === "down" || (mode === "flaky" && flakyFailures > 0)) {
    flakyFailures -= 1;
    return void response.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ code: "DATABASE_UNAVAILABLE", message: "try later" }));
  }
  const offset = Number(url.searchParams.get("offset"));
  const length = Number(url.searchParams.get("length"));
  let body = data.subarray(offset, offset + length);
  if (mode === "truncated" && offset > 0) body = body.subarray(0, body.length - 1);
  if (mode === "wrong-bytes" && offset === 0) body = Buffer.concat([Buffer.from([body[0]! ^ 0xff]), body.subarray(1)]);
  if (mode === "oversized") body = Buffer.concat([body, Buffer.alloc(10)]);
  response.writeHead(200, {
    "content-type": "application/octet-stream",
    "x-leasehold-artifact-sha256": mode === "wrong-header" ? "0".repeat(64) : ref.sha256,
    "x-leasehold-artifact-bytes": String(ref.bytes),
  });
  response.end(body);
}

describe("fetchJobArtifact", () => {
  let server: Server;
  let client: HubClient;
  const dir = mkdtempSync(path.join(tmpdir(), "lh-artifact-fetch-"));
  let n = 0;
  const freshFd = () => openSync(path.join(dir, `f${(n += 1)}`), "w+", 0o600);

  beforeAll(async () => {
    server = createServer(answer);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    client = new HubClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "host-1", privateKey);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function run(m: Mode, r = ref): Promise<{ file: Buffer; error: { code?: string; message?: string } | null }> {
    mode = m;
    const fd = freshFd();
    const file = path.join(dir, `f${n}`);
    try {
      await fetchJobArtifact(client, "3f1b5f0e-1111-4222-8333-444455556666", r, fd);
      return { file: readFileSync(file), error: null };
    } catch (error) {
      return { file: readFileSync(file), error: error as { code?: string; message?: string } };
    } finally {
      closeSync(fd);
    }
  }

  it("writes every byte in signed 4 MiB ranges and checks the whole", async () => {
    seen.length = 0;
    const { file, error } = await run("good");
    expect(error).toBeNull();
    expect(file.equals(data)).toBe(true);
    expect(seen).toEqual([0, 1, 2].map((i) => `/api/agent/jobs/3f1b5f0e-1111-4222-8333-444455556666/artifact?offset=${i * ARTIFACT_FETCH_RANGE_BYTES}&length=${Math.min(ARTIFACT_FETCH_RANGE_BYTES, data.length - i * ARTIFACT_FETCH_RANGE_BYTES)}`));
  });

  it("refuses a truncated range, changed bytes, a different artifact's headers and an oversized answer with INVALID_ARGUMENT", async () => {
    expect((await run("truncated")).error).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining(`got ${ARTIFACT_FETCH_RANGE_BYTES - 1}`) });
    expect((await run("wrong-bytes")).error).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining(`not ${ref.sha256}`) });
    expect((await run("wrong-header")).error).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("different artifact") });
    expect((await run("oversized")).error).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("more than") });
  });

  it("keeps the hub's refusal codes (NOT_FOUND, FORBIDDEN), retries transient failures, and says HOST_UNAVAILABLE when they persist", async () => {
    expect((await run("not-found")).error).toMatchObject({ code: "NOT_FOUND" });
    expect((await run("finished")).error).toMatchObject({ code: "FORBIDDEN" });
    flakyFailures = 2;
    const flaky = await run("flaky");
    expect(flaky.error).toBeNull();
    expect(flaky.file.equals(data)).toBe(true);
    expect((await run("down")).error).toMatchObject({ code: "HOST_UNAVAILABLE" });
    // Unsigned by the right key → the server's 401 is passed on, not retried.
    const stranger = new HubClient(client.hub, "host-1", generateKeyPairSync("ed25519").privateKey);
    mode = "good";
    const fd = freshFd();
    await expect(fetchJobArtifact(stranger, "3f1b5f0e-1111-4222-8333-444455556666", ref, fd)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    closeSync(fd);
  });

  it("refuses a malformed reference before asking the hub", async () => {
    seen.length = 0;
    expect((await run("good", { sha256: "ABC", bytes: 3 })).error).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect((await run("good", { ...ref, bytes: 0 })).error).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(seen).toEqual([]);
  });
});
