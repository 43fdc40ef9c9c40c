/**
 * The admin's stop button (docs/design.md#cancel): an MCP agent (the
 * official SDK client, a token with `--observe any` so its command runs at
 * once) starts `sleep 300` on the hub's local guest; an owner opens the
 * action's page, presses Stop, and the page says it was stopped on its host
 * and shows the action `cancelled` — the same cancel path as the agent's own
 * `action_cancel`, by `admin`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "@playwright/test";
import { leaseholdCli, signedInAs } from "./support/admins";
import { E2E_BASE_URL } from "./support/hub";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
let client: Client | undefined;

test.afterAll(async () => {
  await client?.close();
});

test("an owner stops a running action from its page: it ends cancelled, its sandbox killed", async ({ page }) => {
  test.setTimeout(180_000);
  const created = leaseholdCli(["token", "create", "--name", `stopper-${process.pid}`, "--expires", "1h", "--observe", "any"]);
  const secret = created.split("\n").find((line) => line.startsWith("lh_")) ?? "";
  client = new Client({ name: "e2e-cancel", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
  let actionId: string | undefined;
  let running = false;
  // Left waiting: the stop answers it (or its wait budget ends first); either way the page is what this checks.
  const pending = client
    .callTool({ name: "run_command", arguments: { host: "local", command: "echo started; sleep 300" } }, CallToolResultSchema, {
      timeout: 120_000,
      onprogress: (p) => {
        actionId ??= UUID.exec(p.message ?? "")?.[0];
        if (/bytes of output so far \(stdout [1-9]/.test(p.message ?? "")) running = true;
      },
    })
    .catch(() => undefined);
  await expect.poll(() => running && actionId !== undefined, { timeout: 90_000 }).toBe(true);

  await signedInAs(page, "owner");
  await page.goto(`/actions/${actionId}`);
  await expect(page.getByTestId("action-state")).toHaveText("dispatched");
  await page.getByTestId("stop-action").click();
  await expect(page.getByTestId("stop-result")).toHaveText("Stopped (it was running; its sandbox was killed).", { timeout: 20_000 });
  await expect(page.getByTestId("action-state")).toHaveText("cancelled", { timeout: 10_000 });
  await expect(page.getByTestId("stop-action")).toHaveCount(0);
  await pending;
});
