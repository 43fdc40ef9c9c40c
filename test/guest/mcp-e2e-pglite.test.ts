/**
 * The whole path an agent takes, on the default install: `leasehold start` on
 * embedded PGlite with its local guest, a token made with the CLI, and the MCP
 * SDK client calling run_command on host "local". Checks the sandboxed
 * output, the scrubbing of a secret, a receipt that verifies offline against
 * the hub's published key (and agrees with audit_proof), and a held mutating
 * command approved — or denied — by a named admin through the CLI.
 */
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeBase64Strict, encodeBase64 } from "../../server/trust/ledger/base64";
import { hashLeaf } from "../../server/trust/ledger/hash";
import { verifyReceipt } from "../../server/ledger/receipt";
import { ROOT, childEnv, runCli, runProcess, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { checkedResults, connectClient } from "../mcp/support";
import { waitFor } from "./support";
import { bpfStatus } from "../../native/index";

type Structured = Record<string, unknown> & {
  code?: string;
  status?: string;
  action_id?: string;
  approval_id?: string;
  result?: { exit: { code: number } | null; output: { stdout: string; stderr: string } };
  evidence?: { tier: string; redactions: unknown };
  receipt?: { leaf_index: number; tree_size: number; inclusion_proof: string[]; checkpoint: string } | null;
};

const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;
const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("MCP → hub → local guest, end to end [pglite]", () => {
  let hub: RunningHub;
  let client: Client;
  let logKey: string;
  let token: string;
  const env = () => ({ LEASEHOLD_DATA_DIR: hub.dataDir });

  const call = async (name: string, args: Record<string, unknown>) =>
    structured(await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 60_000 }));

  beforeAll(async () => {
    hub = await startHub({ LEASEHOLD_MCP_APPROVAL_WAIT_S: "0" });
    const created = await runCli(["token", "create", "--name", "e2e", "--expires", "1h"], env());
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.split("\n").find((line) => line.startsWith("lh_"));
    expect(secret).toBeDefined();
    ({ client } = await connectClient(hub.url, secret!));
    token = secret!;
    await waitFor("host local online", async () => {
      const listing = (await call("hosts_list", {})) as { hosts?: Array<{ name: string; online: boolean; tier: string }> };
      return listing.hosts?.find((h) => h.name === "local" && h.online);
    }, 30_000, 300);
    const admin = await runCli(["admin", "create", "--name", "ops"], env());
    expect(admin.code, admin.stderr).toBe(0);
    logKey = (await (await fetch(`${hub.url}/api/ledger/key`)).text()).trim();
  }, 90_000);

  afterAll(async () => {
    await client?.close();
    await hub?.stop();
  }, 30_000);

  it(`run_command runs in the sandbox: output, tier ${bpfStatus().tier} evidence (this machine's BPF verdict), a receipt that verifies and agrees with audit_proof`, async () => {
    const s = await call("run_command", { host: "local", command: "echo hello; id -u" });
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(s.result?.exit?.code).toBe(0);
    const [first, uid] = s.result!.output.stdout.trim().split("\n");
    expect(first).toBe("hello");
    expect(Number(uid)).toBeGreaterThan(0);
    expect(s.evidence?.tier).toBe(bpfStatus().tier);
    const receipt = s.receipt!;
    expect(receipt).toBeTruthy();

    // The entry's bytes, from the offline export (written by the hub through its control socket).
    const out = path.join(tempDir("lh-mcp-e2e-"), "ledger.jsonl");
    const exported = await runCli(["export", "--out", out], env());
    expect(exported.code, exported.stderr).toBe(0);
    const text = fs.readFileSync(out, "utf8");
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
    const line = text
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as { kind: string; index?: number; entry?: string })
      .find((l) => l.kind === "entry" && l.index === receipt.leaf_index);
    const entry = decodeBase64Strict(line!.entry!)!;
    expect(JSON.parse(new TextDecoder().decode(entry))).toMatchObject({ type: "evidence/1", action_id: s.action_id });
    const check = verifyReceipt(entry, { leaf_index: receipt.leaf_index, inclusion_proof: receipt.inclusion_proof, checkpoint: receipt.checkpoint }, logKey);
    expect(check.ok, JSON.stringify(check)).toBe(true);
    // A tampered entry does not verify.
    const tampered = Uint8Array.from(entry);
    tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1;
    expect(verifyReceipt(tampered, { leaf_index: receipt.leaf_index, inclusion_proof: receipt.inclusion_proof, checkpoint: receipt.checkpoint }, logKey).ok).toBe(false);

    const proof = await call("audit_proof", { leaf_index: receipt.leaf_index, tree_size: receipt.tree_size });
    expect(proof.code, JSON.stringify(proof)).toBeUndefined();
    expect(proof).toMatchObject({ leaf_index: receipt.leaf_index, tree_size: receipt.tree_size, proof: receipt.inclusion_proof, leaf_hash: encodeBase64(hashLeaf(entry)) });
    const viaTool = verifyReceipt(entry, { leaf_index: receipt.leaf_index, inclusion_proof: proof.proof as string[], checkpoint: proof.checkpoint as string }, logKey);
    expect(viaTool.ok, JSON.stringify(viaTool)).toBe(true);
  }, 30_000);

  it("what a model reads: a completed command's text is its exit status and stdout, then one reference line within 300 bytes of them; a held one's names the approval_wait call", async () => {
    const done = (await client.callTool({ name: "run_command", arguments: { host: "local", command: "echo hello" } }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    const s = structured(done);
    expect(s.status, JSON.stringify(s)).toBe("completed");
    const text = textOf(done);
    expect(text, text).toMatch(/^completed: exit 0\n\[stdout\]\nhello\n\[ref\] auto_allow, risk read_only; observe lease \(\/work read-only\); evidence sha256:[0-9a-f]{12} tier /);
    expect(text.split("\n"), text).toHaveLength(4);
    expect(text).toContain(`receipt leaf ${s.receipt!.leaf_index}/${s.receipt!.tree_size}`);
    expect(text).toContain(`approval_wait {"action_id":"${s.action_id}"}`);
    expect(Buffer.byteLength(text) - Buffer.byteLength("hello\n")).toBeLessThanOrEqual(300);
    // The call the reference line names gives the stored result again, without running anything.
    const replay = (await client.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    expect(structured(replay)).toMatchObject({ action_id: s.action_id, status: "completed", result: { output: { stdout: "hello\n" } }, receipt: { leaf_index: s.receipt!.leaf_index } });
    expect(textOf(replay).startsWith("completed: exit 0\n[stdout]\nhello\n[ref] ")).toBe(true);

    const held = (await client.callTool({ name: "run_command", arguments: { host: "local", command: "touch text-check" } }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    const h = structured(held);
    expect(h.code, JSON.stringify(h)).toBe("APPROVAL_PENDING");
    expect(textOf(held).split("\n").slice(0, 2)).toEqual([`APPROVAL_PENDING: ${String(h.message)}`, `next: approval_wait {"action_id":"${h.action_id}"} waits for the decision, then returns the result`]);
    // Both results were also checked against run_command's listed outputSchema (connectClient).
    expect(checkedResults.get("run_command")?.ok).toBeGreaterThanOrEqual(1);
    expect(checkedResults.get("run_command")?.error).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it("an auto-allowed command runs under an observe lease: the result says the workspace was read-only, what of the host the sandbox shows, and HOME/LANG/os-release are there", async () => {
    const s = await call("run_command", { host: "local", command: "ls -a /work; cat /etc/os-release; echo home=$HOME lang=$LANG" });
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(s.decision).toBe("auto_allow");
    const result = s.result as Structured["result"] & { structured: { sandbox: { lease: string; workspace: string; host_facts_shown: string[]; note: string } } };
    expect(result!.output.stdout).toContain(fs.readFileSync("/etc/os-release", "utf8").split("\n")[0]!);
    expect(result!.output.stdout).toContain("home=/tmp lang=C.UTF-8");
    expect(result.structured.sandbox).toMatchObject({ lease: "observe", workspace: "read-only" });
    expect(result.structured.sandbox.host_facts_shown.join(" ")).toMatch(/os-release/);
    expect(result.structured.sandbox.note).toMatch(/read-only/);
  }, 30_000);

  it("cwd names an existing workspace sub-directory and the command runs there; a missing one is INVALID_ARGUMENT", async () => {
    const workspace = path.join(hub.dataDir, "workspace");
    fs.mkdirSync(path.join(workspace, "proj", "src"), { recursive: true });
    const ok = await call("run_command", { host: "local", command: "pwd", cwd: "proj/src" });
    expect(ok.status, JSON.stringify(ok)).toBe("completed");
    expect(ok.result!.output.stdout).toBe("/work/proj/src\n");
    const missing = await call("run_command", { host: "local", command: "pwd", cwd: "no/such/dir" });
    expect(missing.code, JSON.stringify(missing)).toBe("INVALID_ARGUMENT");
    expect(String(missing.message)).toMatch(/no\/such\/dir/);
  }, 30_000);

  it("a running command's output so far reaches the client as progress notifications, before the result", async () => {
    const seen: Array<{ progress: number; message?: string }> = [];
    const command = "for i in 1 2 3 4; do printf '%0500d\\n' $i; sleep 1; done";
    const result = await client.callTool({ name: "run_command", arguments: { host: "local", command } }, CallToolResultSchema, {
      timeout: 60_000,
      onprogress: (p) => seen.push({ progress: p.progress, message: p.message }),
    });
    const s = structured(result);
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(s.result!.output.stdout.length).toBe(4 * 501);
    const bytes = seen
      .map((p) => /running on local: (\d+) bytes of output so far/.exec(p.message ?? "")?.[1])
      .filter((b): b is string => b !== undefined)
      .map(Number);
    // The workload writes 501 bytes a second for four seconds: at least two different counts arrive while it runs.
    expect(new Set(bytes).size, JSON.stringify(seen)).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < bytes.length; i++) expect(bytes[i]).toBeGreaterThanOrEqual(bytes[i - 1]!);
    expect(bytes.every((b) => b > 0 && b <= 4 * 501 && b % 501 === 0)).toBe(true);
    // MCP requires progress to increase with each notification.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
  }, 30_000);

  it("tools/mcp-call.mjs (the README's shell client) runs a sandboxed command; a bad token exits 2 and says why", async () => {
    const ok = await mcpCall(["--url", hub.url, "run_command", JSON.stringify({ host: "local", command: "echo via-mcp-call" })], token);
    expect(ok.code, ok.stderr + ok.stdout).toBe(0);
    const body = JSON.parse(ok.stdout) as Structured;
    expect(body.status).toBe("completed");
    expect(body.result?.output.stdout).toBe("via-mcp-call\n");
    const bad = await mcpCall(["--url", hub.url, "hosts_list"], "lh_" + "x".repeat(40));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/could not connect/);
    const refused = await mcpCall(["--url", hub.url, "run_command", JSON.stringify({ host: "local" })], token);
    expect(refused.code, refused.stdout).toBe(1);
    expect((JSON.parse(refused.stdout) as Structured).code).toBe("INVALID_ARGUMENT");
    const usage = await mcpCall(["--url", hub.url, "run_command", "{not json"], token);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/not JSON/);
  }, 60_000);

  it("a secret the command prints arrives redacted", async () => {
    const s = await call("run_command", { host: "local", command: "echo AKIAIOSFODNN7EXAMPLE" });
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(JSON.stringify(s)).not.toContain("AKIAIOSFODNN7EXAMPLE");
    expect(s.result!.output.stdout).toMatch(/REDACTED/i);
  }, 30_000);

  const held = async (file: string) => {
    const s = await call("run_command", { host: "local", command: `touch ${file}` });
    expect(s.code, JSON.stringify(s)).toBe("APPROVAL_PENDING");
    expect(s.action_id).toBeTruthy();
    const list = await runCli(["approvals", "list"], env());
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(s.approval_id);
    return { actionId: s.action_id!, approvalId: s.approval_id! };
  };

  it("a mutating command is held; approved by an admin via the CLI, approval_wait returns its result", async () => {
    const { actionId, approvalId } = await held("approved-file");
    const approve = await runCli(["approvals", "approve", approvalId, "--as", "ops"], env());
    expect(approve.code, approve.stderr + approve.stdout).toBe(0);
    const s = await call("approval_wait", { action_id: actionId });
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(s.result?.exit?.code).toBe(0);
    expect(s.receipt).toBeTruthy();
  }, 30_000);

  it("denied by an admin via the CLI, approval_wait answers APPROVAL_DENIED", async () => {
    const { actionId, approvalId } = await held("denied-file");
    const deny = await runCli(["approvals", "deny", approvalId, "--reason", "not today", "--as", "ops"], env());
    expect(deny.code, deny.stderr + deny.stdout).toBe(0);
    const s = await call("approval_wait", { action_id: actionId });
    expect(s.code, JSON.stringify(s)).toBe("APPROVAL_DENIED");
  }, 30_000);
});

function mcpCall(args: string[], token: string) {
  return runProcess(process.execPath, [path.join(ROOT, "tools", "mcp-call.mjs"), ...args], { env: childEnv({ MCP_TOKEN: token }), label: "mcp-call" });
}
