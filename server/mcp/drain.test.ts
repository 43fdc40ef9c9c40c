import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { loadConfig } from "../config";
import type { HubRuntime } from "../hub/runtime";
import { handleMcpRequest, mcpCallsInFlight, whenMcpCallsDone } from "./endpoint";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-drain-"));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describeEachDatabase("draining waits for every POST let in", (db) => {
  const runtimeOf = (): HubRuntime => {
    const parsed = loadConfig({ LEASEHOLD_DATA_DIR: dataDir }, dataDir);
    if (!parsed.ok) throw new Error(parsed.message);
    return { config: parsed.config, database: { handle: db().handle }, lifecycle: { draining: false } } as unknown as HubRuntime;
  };
  const post = (config: HubRuntime["config"]) =>
    new Request(`${config.publicUrl}/api/mcp`, {
      method: "POST",
      headers: { authorization: "Bearer lh_mcp_not_a_token", "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });

  it("a POST counts as in flight from the draining check, before its authentication's round trip: a SIGTERM in between waits for its answer", async () => {
    const runtime = runtimeOf();
    const answering = handleMcpRequest(post(runtime.config), runtime);
    // Nothing has been awaited yet: the token lookup is still ahead of this call.
    expect(mcpCallsInFlight(runtime)).toBe(1);
    runtime.lifecycle.draining = true;
    let answered = false;
    void answering.then(() => (answered = true));
    const left = await whenMcpCallsDone(runtime, 30_000);
    expect(left).toBe(0);
    expect(answered).toBe(true);
    expect((await answering).status).toBe(401);
    expect(mcpCallsInFlight(runtime)).toBe(0);
  });

  it("once draining, a new POST is refused with HUB_STOPPING and never counted", async () => {
    const runtime = runtimeOf();
    runtime.lifecycle.draining = true;
    const response = await handleMcpRequest(post(runtime.config), runtime);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain("HUB_STOPPING");
    expect(mcpCallsInFlight(runtime)).toBe(0);
  });
});
