/**
 * artifact_upload through the SDK's client against a real hub (`leasehold
 * start`): chunked and resumable, a 2 MiB chunk within the MCP body limit,
 * every refusal with a clear code, per-token visibility, and the tool's
 * place in token scopes (a read-only token may upload; a --tools scope
 * without it may not).
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseKind } from "../../server/db";
import { hubDatabaseFor, testPostgresUrl } from "../support/databases";
import { startHub, type RunningHub } from "../support/hub-process";
import { connectClient, createTokenViaCli, type HubAddress } from "./support";

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const MiB = 1024 * 1024;

describe.each(["pglite", "postgres"] as DatabaseKind[])("artifact_upload on a real hub [%s]", (kind) => {
  if (kind === "postgres" && !testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
    });
    return;
  }
  let hub: RunningHub;
  let drop: (() => Promise<void>) | undefined;
  const tokens: Record<"reader" | "other" | "healthOnly", { id: string; secret: string }> = {} as never;

  beforeAll(async () => {
    const database = await hubDatabaseFor(kind);
    drop = database.drop;
    hub = await startHub({ DATABASE_URL: database.url, LEASEHOLD_LOCAL_GUEST: "0", LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000", LEASEHOLD_ARTIFACT_MAX_BYTES: String(6 * MiB), LEASEHOLD_ARTIFACT_QUOTA_BYTES: String(8 * MiB) });
    const address: HubAddress = { url: hub.url, port: hub.port, dataDir: hub.dataDir, ...(database.url === undefined ? {} : { databaseUrl: database.url }) };
    [tokens.reader, tokens.other, tokens.healthOnly] = (await Promise.all([
      createTokenViaCli(address, ["--name", "reader", "--read-only", "--expires", "1d"]),
      createTokenViaCli(address, ["--name", "other", "--expires", "1d"]),
      createTokenViaCli(address, ["--name", "health only", "--tools", "health", "--expires", "1d"]),
    ])) as [never, never, never];
  }, 180_000);

  afterAll(async () => {
    await hub?.stop();
    await drop?.();
  });

  it("a read-only token uploads 5 MiB in resumable chunks (one of 2 MiB), with status, idempotent re-send and clear refusals", async () => {
    const { client } = await connectClient(hub.url, tokens.reader.secret);
    const listed = await client.listTools();
    const tool = listed.tools.find((t) => t.name === "artifact_upload");
    expect(tool?.annotations?.readOnlyHint).toBe(true);
    expect(tool?.description?.split(/(?<=\.) /).length).toBe(2);
    const data = randomBytes(5 * MiB + 123);
    const sha256 = sha(data);
    const call = async (args: Record<string, unknown>) => {
      const result = await client.callTool({ name: "artifact_upload", arguments: { sha256, bytes: data.length, ...args } });
      return { isError: result.isError ?? false, body: result.structuredContent as Record<string, unknown> };
    };
    const chunk = (offset: number, length: number) => {
      const piece = data.subarray(offset, offset + length);
      return { offset, chunk: piece.toString("base64"), chunk_sha256: sha(piece) };
    };
    expect(await call({})).toEqual({ isError: false, body: expect.objectContaining({ received: 0, next_offset: 0, complete: false }) });
    const first = await call(chunk(0, 2 * MiB));
    expect(first.body).toMatchObject({ received: 2 * MiB, next_offset: 2 * MiB, complete: false });
    // A new session resumes from the status.
    const { client: again } = await connectClient(hub.url, tokens.reader.secret);
    const status = await again.callTool({ name: "artifact_upload", arguments: { sha256, bytes: data.length } });
    expect(status.structuredContent).toMatchObject({ next_offset: 2 * MiB });
    // Re-sending the stored chunk is a no-op; a gap names next_offset; a damaged chunk is refused.
    expect((await call(chunk(0, 2 * MiB))).body).toMatchObject({ received: 2 * MiB });
    const gap = await call(chunk(3 * MiB, MiB));
    expect(gap).toMatchObject({ isError: true, body: { code: "INVALID_ARGUMENT" } });
    expect(String(gap.body["message"])).toContain(`next_offset is ${2 * MiB}`);
    const damaged = { ...chunk(2 * MiB, MiB), chunk_sha256: sha(Buffer.from("x")) };
    expect(await call(damaged)).toMatchObject({ isError: true, body: { code: "INVALID_ARGUMENT" } });
    const oversized = await call({ offset: 2 * MiB, chunk: randomBytes(2 * MiB + 3).toString("base64"), chunk_sha256: sha256 });
    expect(oversized).toMatchObject({ isError: true, body: { code: "INVALID_ARGUMENT" } });
    expect(await call({ offset: 2 * MiB, chunk: "QUJD\n", chunk_sha256: sha256 })).toMatchObject({ isError: true, body: { code: "INVALID_ARGUMENT" } });
    expect((await call(chunk(2 * MiB, 2 * MiB))).body).toMatchObject({ received: 4 * MiB, complete: false });
    expect((await call(chunk(4 * MiB, data.length - 4 * MiB))).body).toMatchObject({ received: data.length, next_offset: data.length, complete: true });
    // Another token sees nothing of it.
    const { client: other } = await connectClient(hub.url, tokens.other.secret);
    expect((await other.callTool({ name: "artifact_upload", arguments: { sha256, bytes: data.length } })).structuredContent).toMatchObject({ received: 0, complete: false });
  });

  it("discards a whole that does not match its sha256, and refuses sizes past the cap and the quota by name", async () => {
    const { client } = await connectClient(hub.url, tokens.other.secret);
    const data = randomBytes(1000);
    const claimed = sha(Buffer.from("something else"));
    const wrong = await client.callTool({ name: "artifact_upload", arguments: { sha256: claimed, bytes: 1000, offset: 0, chunk: data.toString("base64"), chunk_sha256: sha(data) } });
    expect(wrong.isError).toBe(true);
    expect(String((wrong.structuredContent as Record<string, unknown>)["message"])).toContain("the upload was discarded");
    const big = await client.callTool({ name: "artifact_upload", arguments: { sha256: claimed, bytes: 6 * MiB + 1, offset: 0, chunk: data.toString("base64"), chunk_sha256: sha(data) } });
    expect(big.structuredContent).toMatchObject({ code: "POLICY_REFUSED" });
    expect(String((big.structuredContent as Record<string, unknown>)["message"])).toContain("LEASEHOLD_ARTIFACT_MAX_BYTES");
    const piece = data.subarray(0, 10);
    for (const fill of ["1", "2"]) await client.callTool({ name: "artifact_upload", arguments: { sha256: fill.repeat(64), bytes: 4 * MiB, offset: 0, chunk: piece.toString("base64"), chunk_sha256: sha(piece) } });
    const quota = await client.callTool({ name: "artifact_upload", arguments: { sha256: "3".repeat(64), bytes: 10, offset: 0, chunk: piece.toString("base64"), chunk_sha256: sha(piece) } });
    expect(quota.structuredContent).toMatchObject({ code: "RATE_LIMITED" });
    expect(String((quota.structuredContent as Record<string, unknown>)["message"])).toContain("LEASEHOLD_ARTIFACT_QUOTA_BYTES");
  });

  it("the hub serves the guest's artifact route, signed only (unsigned → 401, never bytes)", async () => {
    const response = await fetch(`${hub.url}/api/agent/jobs/3f1b5f0e-1111-4222-8333-444455556666/artifact?offset=0&length=10`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("a --tools scope without artifact_upload neither lists nor calls it", async () => {
    const { client } = await connectClient(hub.url, tokens.healthOnly.secret);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["health"]);
    // Refused by name before any argument is looked at (403 on the request, as for every tool outside a scope).
    await expect(client.callTool({ name: "artifact_upload", arguments: { sha256: "a".repeat(64), bytes: 1 } })).rejects.toThrow(/"code":"FORBIDDEN".*outside this token's tool scope/);
  });
});
