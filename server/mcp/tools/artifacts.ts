import { appendArtifactChunk, artifactLimitsOf, artifactUploadStatus, MAX_APPEND_BYTES, type ArtifactOwner } from "../../artifacts";
import { LeaseholdError } from "../../errors";
import { ARTIFACT_SCHEMA } from "./output-schemas";
import { artifactText } from "./text";
import type { HubTool } from "./tool";

/**
 * `artifact_upload`: a file for a capability's `artifact` argument, sent in
 * resumable chunks (server/artifacts). It changes no host — the bytes stay
 * in the hub, visible only to this token — so it is not mutating: a
 * read-only token may upload input for read-only analysis. A `--tools`
 * scope still has to name it.
 */

/** Base64 characters of MAX_APPEND_BYTES decoded bytes, padded. */
const MAX_CHUNK_CHARS = Math.ceil(MAX_APPEND_BYTES / 3) * 4;
const SHA256 = { type: "string", minLength: 64, maxLength: 64, pattern: "^[0-9a-f]{64}$" } as const;

function decodeChunk(chunk: string): Buffer {
  const data = Buffer.from(chunk, "base64");
  if (data.toString("base64") !== chunk) {
    throw new LeaseholdError("INVALID_ARGUMENT", "chunk is not canonical base64 (RFC 4648 standard alphabet, padded, no whitespace)", { tier: "hub" });
  }
  return data;
}

export const artifactUploadTool: HubTool = {
  name: "artifact_upload",
  title: "Upload an artifact",
  description:
    `Uploads a file for a tool's artifact argument in chunks: call with sha256 and bytes of the whole file, offset = next_offset (0 at first), chunk = base64 of at most ${MAX_APPEND_BYTES} bytes and chunk_sha256 = its SHA-256, repeating until complete is true (a call without chunk returns the status, so an interrupted upload resumes at next_offset). Then pass {"sha256": "<sha256>"} as the artifact argument; each chunk and the whole file are checked by SHA-256, and a whole that does not match is discarded.`,
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["sha256", "bytes"],
    properties: {
      sha256: { ...SHA256, description: "SHA-256 (lower-case hex) of the whole file." },
      bytes: { type: "integer", minimum: 1, maximum: 1_099_511_627_776, description: "Size of the whole file in bytes." },
      offset: { type: "integer", minimum: 0, maximum: 1_099_511_627_776, description: "Where this chunk starts: the next_offset of the previous answer (0 at first)." },
      chunk: { type: "string", minLength: 4, maxLength: MAX_CHUNK_CHARS, description: `The bytes at offset, base64 (at most ${MAX_APPEND_BYTES} bytes decoded). Omit to ask for the status.` },
      chunk_sha256: { ...SHA256, description: "SHA-256 (lower-case hex) of this chunk's decoded bytes." },
    },
  },
  mutating: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: ARTIFACT_SCHEMA,
  text: artifactText,
  async run(args, ctx) {
    const db = ctx.runtime.database.handle.db;
    const owner: ArtifactOwner = { kind: "token", id: ctx.token.id };
    const sha256 = String(args["sha256"]);
    const bytes = Number(args["bytes"]);
    const limits = artifactLimitsOf(ctx.runtime.config);
    if (args["chunk"] === undefined) {
      if (args["offset"] !== undefined || args["chunk_sha256"] !== undefined) {
        throw new LeaseholdError("INVALID_ARGUMENT", "offset and chunk_sha256 go with a chunk; without chunk the call only asks for the status", { tier: "hub" });
      }
      const status = await artifactUploadStatus(db, owner, sha256, ctx.now);
      if (status.expires_at !== null && status.bytes !== bytes) {
        throw new LeaseholdError("INVALID_ARGUMENT", `this upload of ${sha256} was begun with bytes=${status.bytes}, not ${bytes}`, { tier: "hub", details: { bytes: status.bytes } });
      }
      return { ...status, bytes };
    }
    if (typeof args["offset"] !== "number" || typeof args["chunk_sha256"] !== "string") {
      throw new LeaseholdError("INVALID_ARGUMENT", "a chunk needs offset (the status's next_offset) and chunk_sha256 (SHA-256 of the decoded chunk)", { tier: "hub" });
    }
    const data = decodeChunk(String(args["chunk"]));
    return { ...(await appendArtifactChunk(db, owner, { sha256, bytes, offset: args["offset"], data, chunkSha256: args["chunk_sha256"] }, limits, ctx.now)) };
  },
};
