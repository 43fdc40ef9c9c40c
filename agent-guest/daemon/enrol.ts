/**
 * `leasehold-guest enrol --hub URL` (the code from LEASEHOLD_ENROL_CODE or stdin): generates the host key and
 * the witness key in the state directory (0600 in a 0700 directory),
 * registers both public keys with the one-time code, and pins what the hub
 * answers: its job-signing key and its ledger log key.
 */
import { createPublicKey, sign } from "node:crypto";
import { generateCosignerKey } from "../../server/trust/ledger/witness";
import { LeaseholdError, enrolmentProofString, sha256Hex } from "../../server/trust";
import { parseHubUrl } from "./transport";
import { createHostKey, ensureStateDir, loadEnrolment, saveEnrolment, saveWitnessKey, type Enrolment } from "./state";

export async function enrol(options: { hub: string; code: string; stateDir: string }): Promise<Enrolment> {
  const hub = options.hub.replace(/\/+$/, "");
  parseHubUrl(options.hub);
  // One state directory is one host: enrolling it again would register its key under a second name.
  const existing = loadEnrolment(options.stateDir);
  if (existing !== null) {
    throw new LeaseholdError("INVALID_ARGUMENT", `${options.stateDir} is already enrolled as host ${JSON.stringify(existing.name)} (${existing.host_id}) with ${existing.hub}; use another --state-dir, or remove this one to enrol afresh`, { tier: "guest" });
  }
  ensureStateDir(options.stateDir);
  const hostKey = createHostKey(options.stateDir);
  const publicKey = createPublicKey(hostKey).export({ type: "spki", format: "pem" }).toString();
  const witnessName = `${new URL(hub).host}/leasehold-guest/${sha256Hex(publicKey).slice(0, 12)}`;
  const witness = generateCosignerKey(witnessName);
  const proof = sign(null, Buffer.from(enrolmentProofString(sha256Hex(options.code), witness.verifier)), hostKey).toString("base64");
  let response: Response;
  try {
    response = await fetch(`${hub}/api/agent/enrol`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: options.code, public_key: publicKey, witness_key: witness.verifier, proof }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error, the timeout) is its cause.
    const cause = error instanceof Error && error.cause instanceof Error ? ((error.cause as NodeJS.ErrnoException).code ?? error.cause.message) : error instanceof Error ? error.message : String(error);
    throw new LeaseholdError("HOST_UNAVAILABLE", `cannot reach the hub at ${hub}: ${cause}; nothing was enrolled`, { tier: "guest" });
  }
  const body = (await response.json().catch(() => null)) as { host_id?: string; name?: string; hub?: { job_key?: string; log_key?: string }; code?: string; message?: string } | null;
  if (!response.ok || body?.host_id === undefined || body.hub?.job_key === undefined || body.hub.log_key === undefined || body.name === undefined) {
    throw new LeaseholdError("UNAUTHENTICATED", `enrolment refused by the hub (${response.status}): ${body?.message ?? "no answer"}`, { tier: "guest" });
  }
  saveWitnessKey(options.stateDir, witness.signer);
  const enrolment: Enrolment = { hub, host_id: body.host_id, name: body.name, job_key: body.hub.job_key, log_key: body.hub.log_key };
  saveEnrolment(options.stateDir, enrolment);
  return enrolment;
}

export { loadEnrolment };
