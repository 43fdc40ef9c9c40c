/**
 * Artifact arguments through the pipeline: the
 * prepare step stores `{base64}` and checks `{sha256}`, and the prepared
 * action — what action_hash covers and the signed job carries — holds only
 * `{sha256, bytes}`. Refusals are sealed as refusal/1 at `prepare`.
 */
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction, type Caller } from "../../server/actions";
import { INLINE_ARTIFACT_MAX_BYTES } from "../../server/actions/pipeline";
import { appendArtifactChunk, claimArtifact, sha256Hex } from "../../server/artifacts";
import { canonicalDigest } from "../../server/canonical";
import { jobs, actions } from "../../server/db/schema";
import { describeEachDatabase } from "../support/databases";
import { rejectionOf } from "../support/refusals";
import { allEntries, insertAdmin, insertHost, insertToken, testDeps } from "./support";

function ownerOf(caller: Caller) {
  return caller.kind === "token" ? { kind: "token" as const, id: caller.tokenId } : { kind: "admin" as const, id: caller.adminId };
}

describeEachDatabase("artifact arguments in the pipeline", (db) => {
  const inspect = (host: string, artifact: Record<string, unknown>) => ({ operation: "apk_inspect", arguments: { host, artifact }, channel: "mcp" as const });

  it("stores an inline {base64}, replaces it with {sha256, bytes} before action_hash, auto-allows it as read_only and signs that into the job", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db, { readOnly: true });
    const data = randomBytes(5000);
    const sha256 = sha256Hex(data);
    const outcome = await submitAction(deps, caller, inspect(host.name, { base64: data.toString("base64") }), { waitMs: 0 });
    expect(outcome.decision).toBe("auto_allow");
    expect(outcome.risk.level).toBe("read_only");
    const [row] = await db().handle.db.select().from(actions).where(eq(actions.id, outcome.action_id));
    const prepared = row!.prepared as { arguments: Record<string, unknown> };
    expect(prepared.arguments["artifact"]).toEqual({ sha256, bytes: 5000 });
    expect(JSON.stringify(prepared)).not.toContain(data.toString("base64").slice(0, 40));
    expect(canonicalDigest(prepared)).toBe(outcome.action_hash);
    const [job] = await db().handle.db.select().from(jobs).where(eq(jobs.id, outcome.job.id));
    expect((job!.payload as { payload: { arguments: Record<string, unknown> } }).payload.arguments).toEqual({ artifact: { sha256, bytes: 5000 } });
    // It is now this caller's complete artifact, sealed once.
    expect(await claimArtifact(db().handle.db, ownerOf(caller), sha256)).toEqual({ sha256, bytes: 5000 });
    const sealed = (await allEntries(db().handle.db)).filter((e) => e.type === "artifact/1" && e.data.sha256 === sha256);
    expect(sealed.map((e) => e.type === "artifact/1" && e.data.source)).toEqual(["inline"]);
  });

  it("resolves {sha256} of this caller's complete upload, and the same bytes inline give the same action_hash", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertAdmin(db().handle.db).then((a): Caller => ({ kind: "admin", adminId: a.id, username: a.username, sessionId: null }));
    const data = randomBytes(3000);
    const sha256 = sha256Hex(data);
    await appendArtifactChunk(db().handle.db, ownerOf(caller), { sha256, bytes: data.length, offset: 0, data, chunkSha256: sha256 });
    const byHash = await submitAction(deps, caller, inspect(host.name, { sha256 }), { waitMs: 0 });
    const inline = await submitAction(deps, caller, inspect(host.name, { base64: data.toString("base64") }), { waitMs: 0 });
    expect(byHash.action_hash).toBe(inline.action_hash);
  });

  it("refuses an unknown sha256, another token's upload and an incomplete one with NOT_FOUND, sealed at prepare", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const other = await insertToken(db().handle.db);
    const data = randomBytes(2000);
    const sha256 = sha256Hex(data);
    await appendArtifactChunk(db().handle.db, ownerOf(other), { sha256, bytes: data.length, offset: 0, data, chunkSha256: sha256 });
    const partial = randomBytes(2000);
    const partialSha = sha256Hex(partial);
    await appendArtifactChunk(db().handle.db, ownerOf(caller), { sha256: partialSha, bytes: 2000, offset: 0, data: partial.subarray(0, 1000), chunkSha256: sha256Hex(partial.subarray(0, 1000)) });
    const before = (await allEntries(db().handle.db)).filter((e) => e.type === "refusal/1").length;
    for (const named of ["f".repeat(64), sha256, partialSha]) {
      const error = await rejectionOf(submitAction(deps, caller, inspect(host.name, { sha256: named }), { waitMs: 0 }));
      expect(error.code).toBe("NOT_FOUND");
      expect(error.message).toBe(`no complete artifact ${named} uploaded by this caller`);
      expect(error.hint).toContain("artifact_upload");
    }
    const refusals = (await allEntries(db().handle.db)).filter((e) => e.type === "refusal/1").slice(before);
    expect(refusals.map((e) => e.type === "refusal/1" && [e.data.stage, e.data.code, e.data.operation])).toEqual([
      ["prepare", "NOT_FOUND", "apk_inspect"],
      ["prepare", "NOT_FOUND", "apk_inspect"],
      ["prepare", "NOT_FOUND", "apk_inspect"],
    ]);
  });

  it("refuses inline base64 over 2 MiB decoded (pointing at artifact_upload) and non-canonical base64, sealed, storing nothing", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const big = randomBytes(INLINE_ARTIFACT_MAX_BYTES + 1);
    const error = await rejectionOf(submitAction(deps, caller, inspect(host.name, { base64: big.toString("base64") }), { waitMs: 0 }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(`${INLINE_ARTIFACT_MAX_BYTES + 1} bytes decoded; at most ${INLINE_ARTIFACT_MAX_BYTES} bytes may be passed inline`);
    expect(error.hint).toContain("artifact_upload");
    await expect(claimArtifact(db().handle.db, ownerOf(caller), sha256Hex(big))).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Exactly at the cap it is accepted.
    const atCap = randomBytes(INLINE_ARTIFACT_MAX_BYTES);
    expect((await submitAction(deps, caller, inspect(host.name, { base64: atCap.toString("base64") }), { waitMs: 0 })).status).toBe("dispatched");
    const sloppy = await rejectionOf(submitAction(deps, caller, inspect(host.name, { base64: "QUJD" + "=" }), { waitMs: 0 }));
    expect(sloppy.code).toBe("INVALID_ARGUMENT");
    const refusals = (await allEntries(db().handle.db)).filter((e) => e.type === "refusal/1" && e.data.stage === "prepare" && e.data.code === "INVALID_ARGUMENT");
    expect(refusals.length).toBeGreaterThanOrEqual(2);
  });

  it("refuses both or neither of base64 and sha256 at validate", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const both = await rejectionOf(submitAction(deps, caller, inspect(host.name, { base64: "QUJD", sha256: "a".repeat(64) }), { waitMs: 0 }));
    expect(both.code).toBe("INVALID_ARGUMENT");
    expect(both.message).toContain("/artifact must give exactly one of base64 and sha256 (got both)");
  });
});
