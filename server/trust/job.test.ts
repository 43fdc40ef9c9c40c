import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as capabilities from "../capabilities";
import * as dispatch from "../dispatch";
import * as errors from "../errors";
import { canonicalDigest, checkDeliveredJob, signJob, verifyJob, type JobDocument } from "./index";
import * as trust from "./index";

// A fixed Ed25519 key (seed 0x07 × 32) and document. The expected values were
// computed by the code before it moved here (server/dispatch/jobs.ts and
// server/canonical/jcs.ts at 3fda622), so a byte that changes in canonical
// JSON or in what is signed fails this test.
const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.alloc(32, 7)]), format: "der", type: "pkcs8" });
const publicKey = createPublicKey(privateKey);
const action = {
  operation: "run_command",
  capability: { id: "shell", version: "1.0.0" },
  mutating: true,
  arguments: { command: "echo é \u2028 ok" },
  policy: { schema: "leasehold.sandbox-policy/1", timeout_s: 30, exec_allow: ["/usr/bin"] },
  host: { id: "h-1" },
};

function document(over: Partial<JobDocument> = {}): JobDocument {
  return {
    schema: "leasehold.job/1",
    job_id: "j-1",
    action_id: "a-1",
    action_hash: canonicalDigest(action),
    host_id: "h-1",
    action,
    payload: {
      schema: "leasehold.job-payload/1",
      host: "web-1",
      capability: { id: "shell", version: "1.0.0", worker_abi: 1 },
      operation: "run_command",
      mutating: true,
      arguments: { command: "echo" },
      sandbox: action.policy as unknown as JobDocument["payload"]["sandbox"],
    },
    deadline: "2030-01-01T00:00:00.000Z",
    key_id: "0123456789abcdef",
    lease: { id: "l-1", mode: "exclusive" },
    ...over,
  };
}

describe("the signed job (server/trust/job.ts)", () => {
  it("signs and hashes the same bytes as before the move (known answers from 3fda622)", () => {
    const doc = document();
    expect(doc.action_hash).toBe("sha256:311b00ac922d2d28a1118919e99fb133e286e01c686b19a3cc2c3fd1d08061d7");
    const signed = signJob(doc, { privateKey });
    expect(signed.signature).toBe("nRrNXEFV1ez/A7zQYE9eR/1pZbKsKQ+dCikEoNUWAwn9k5tof6XMuLR4ijCkukBqhVQ0KsCwpBl4tsBa/yP7Cg==");
    expect(signed.digest).toBe("sha256:ab4f81f3695448da138ebdca8fb97d9a14121c6b25c31e05efbf32fa7cb666d0");
    expect(verifyJob(doc, signed.signature, publicKey)).toEqual({ ok: true });
  });

  it("keeps the error payload a client sees byte for byte", () => {
    const payload = trust.toErrorPayload(new trust.LeaseholdError("POLICY_REFUSED", "m", { tier: "guest", details: { check: "x" } }));
    expect(JSON.stringify(payload)).toBe('{"code":"POLICY_REFUSED","message":"m","retryable":false,"tier":"guest","details":{"check":"x"}}');
  });

  it("checkDeliveredJob takes every field from the signed document and refuses with the guest's reasons", () => {
    const signed = signJob(document(), { privateKey });
    const delivered = { id: "j-1", document: signed.document, signature: signed.signature };
    const at = Date.parse("2029-01-01T00:00:00Z");
    const ok = checkDeliveredJob(delivered, { jobKey: publicKey, hostId: "h-1", now: at });
    expect(ok).toMatchObject({ ok: true, job: { job_id: "j-1", action_hash: signed.document.action_hash, operation: "run_command", writesWorkspace: true, deadline: new Date("2030-01-01T00:00:00.000Z") } });
    const other = generateKeyPairSync("ed25519").publicKey;
    expect(checkDeliveredJob(delivered, { jobKey: other, hostId: "h-1", now: at })).toEqual({ ok: false, reason: "the hub signature does not verify with the pinned job key" });
    expect(checkDeliveredJob(delivered, { jobKey: publicKey, hostId: "h-2", now: at })).toEqual({ ok: false, reason: "the job is for another host" });
    expect(checkDeliveredJob({ ...delivered, id: "j-2" }, { jobKey: publicKey, hostId: "h-1", now: at })).toEqual({ ok: false, reason: "the job was delivered under another id" });
    expect(checkDeliveredJob(delivered, { jobKey: publicKey, hostId: "h-1", now: Date.parse("2031-01-01T00:00:00Z") })).toEqual({ ok: false, reason: "the job deadline has passed" });
    const rehashed = document({ action_hash: "sha256:00" });
    const resigned = signJob(rehashed, { privateKey });
    expect(checkDeliveredJob({ id: "j-1", document: rehashed, signature: resigned.signature }, { jobKey: publicKey, hostId: "h-1", now: at })).toEqual({ ok: false, reason: "action_hash does not match the prepared action" });
  });

  it("checkDeliveredJob exposes the pinned worker digest of the hashed action, refuses a malformed one, and adds none when the action names none", () => {
    const at = Date.parse("2029-01-01T00:00:00Z");
    const deliver = (capability: Record<string, unknown>) => {
      const pinned = { ...action, capability };
      const signed = signJob(document({ action: pinned, action_hash: canonicalDigest(pinned) }), { privateKey });
      return checkDeliveredJob({ id: "j-1", document: signed.document, signature: signed.signature }, { jobKey: publicKey, hostId: "h-1", now: at });
    };
    const digest = `sha256:${"ab".repeat(32)}`;
    expect(deliver({ id: "apk-static", version: "1.0.0", worker_digest: digest })).toMatchObject({ ok: true, job: { capability: { id: "apk-static", version: "1.0.0", worker_digest: digest } } });
    expect(deliver({ id: "apk-static", version: "1.0.0", worker_digest: "sha256:AB" })).toEqual({ ok: false, reason: "the prepared action names a malformed worker digest" });
    const plain = deliver({ id: "shell", version: "1.0.0" });
    expect(plain.ok && plain.job.capability).toEqual({ id: "shell", version: "1.0.0" });
  });

  it("is the one implementation the hub's modules hand out (re-exports, not copies)", () => {
    expect(dispatch.signJob).toBe(trust.signJob);
    expect(dispatch.verifyJob).toBe(trust.verifyJob);
    expect(capabilities.parseEgressRule).toBe(trust.parseEgressRule);
    expect(capabilities.kernelRequirementsFor).toBe(trust.kernelRequirementsFor);
    expect(errors.LeaseholdError).toBe(trust.LeaseholdError);
    expect(errors.ERROR_CODES).toBe(trust.ERROR_CODES);
  });
});
