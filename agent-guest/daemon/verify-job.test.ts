import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalDigest } from "../../server/canonical";
import { generateJobKey, signJob, type JobDocument } from "../../server/dispatch";
import { thrownBy } from "../../test/support/refusals";
import { SeenJobs } from "./state";
import { verifySignedJob } from "./verify-job";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const key = generateJobKey();
const hostId = randomUUID();

function seen(): SeenJobs {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-seen-"));
  dirs.push(dir);
  return new SeenJobs(dir);
}

function job(over: { mutating?: boolean; lease?: unknown; deadline?: Date; host?: string; edit?: (doc: Record<string, unknown>) => void } = {}) {
  const action = {
    schema: "leasehold.action/1",
    operation: "run_command",
    capability: { id: "shell", version: "1.0.0" },
    mutating: over.mutating ?? true,
    host: { id: over.host ?? hostId, name: "h" },
    arguments: { host: "h", command: "ls" },
    policy: { schema: "leasehold.sandbox-policy/1" },
  };
  const id = randomUUID();
  const document = {
    schema: "leasehold.job/1",
    job_id: id,
    action_id: randomUUID(),
    action_hash: canonicalDigest(action),
    host_id: over.host ?? hostId,
    action,
    payload: {},
    deadline: (over.deadline ?? new Date(Date.now() + 60_000)).toISOString(),
    key_id: key.keyId,
    lease: over.lease === undefined ? { id: randomUUID(), mode: "exclusive" } : over.lease,
  } as unknown as JobDocument;
  const signed = signJob(document, key);
  const delivered = structuredClone(document) as unknown as Record<string, unknown>;
  over.edit?.(delivered);
  return { id, document: delivered, signature: signed.signature };
}

function refusalOf(fn: () => unknown): string {
  const refused = thrownBy(fn);
  if (refused.code !== "POLICY_REFUSED") throw refused;
  return refused.message;
}

const ctx = () => ({ jobKey: key.publicKey, hostId, seen: seen() });

describe("verifySignedJob", () => {
  it("accepts a signed job for this host; the workspace is writable only for a mutating operation under an exclusive lease", () => {
    expect(verifySignedJob(job(), ctx())).toMatchObject({ operation: "run_command", mutating: true, writesWorkspace: true });
    expect(verifySignedJob(job({ lease: { id: "l", mode: "observe" } }), ctx())).toMatchObject({ mutating: true, writesWorkspace: false });
    expect(verifySignedJob(job({ mutating: false }), ctx())).toMatchObject({ mutating: false, writesWorkspace: false });
  });

  it("refuses a job whose lease was upgraded after signing, or that names no lease mode", () => {
    expect(refusalOf(() => verifySignedJob(job({ lease: { id: "l", mode: "observe" }, edit: (d) => (d["lease"] = { id: "l", mode: "exclusive" }) }), ctx()))).toMatch(/signature does not verify/);
    expect(refusalOf(() => verifySignedJob(job({ lease: { id: "l", mode: "write" } }), ctx()))).toMatch(/no lease mode/);
    expect(refusalOf(() => verifySignedJob(job({ lease: null }), ctx()))).toMatch(/no lease mode/);
  });

  it("refuses a tampered action, another host's job, a passed deadline, a foreign key and a replay", () => {
    expect(refusalOf(() => verifySignedJob(job({ edit: (d) => ((d["action"] as { arguments: { command: string } }).arguments.command = "rm -rf /") }), ctx()))).toMatch(/signature/);
    expect(refusalOf(() => verifySignedJob(job({ host: randomUUID() }), ctx()))).toMatch(/another host/);
    expect(refusalOf(() => verifySignedJob(job({ deadline: new Date(Date.now() - 1) }), ctx()))).toMatch(/deadline/);
    expect(refusalOf(() => verifySignedJob(job(), { ...ctx(), jobKey: generateJobKey().publicKey }))).toMatch(/signature/);
    const once = job();
    const c = ctx();
    verifySignedJob(once, c);
    expect(refusalOf(() => verifySignedJob(once, c))).toMatch(/replayed/);
  });
});
