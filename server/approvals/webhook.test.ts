import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createApprovalWebhook, passkeyAddedBody, SIGNATURE_HEADER, webhookBody, type HeldNotice } from "./webhook";

const SECRET = "webhook-test-secret-0123456789";
const notice: HeldNotice = {
  approvalId: "11111111-1111-4111-8111-111111111111",
  actionId: "22222222-2222-4222-8222-222222222222",
  host: "web-1",
  operation: "run_command",
  risk: "medium",
  deadline: new Date("2026-12-01T17:05:00.000Z"),
};

interface Received {
  method: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** A receiver on loopback: records each request and answers with `status` (or never, with "hang"). */
async function receiver(answer: number | "hang"): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (answer !== "hang") res.writeHead(answer).end("ok");
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

describe("approval webhook", () => {
  it("POSTs the small JSON with a link to the approval, signed sha256=HMAC-SHA256(body) under the secret (checked as a receiver would)", async () => {
    const { url, received } = await receiver(204);
    const logs: string[] = [];
    const hook = createApprovalWebhook({ url, secret: SECRET, publicUrl: "http://localhost:8700/", log: (l) => logs.push(l) });
    expect(await hook.notify(notice)).toBe("sent");
    expect(received).toHaveLength(1);
    const [req] = received as [Received];
    expect(req.method).toBe("POST");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req.body)).toEqual({
      type: "approval.requested",
      approval_id: notice.approvalId,
      action_id: notice.actionId,
      host: "web-1",
      operation: "run_command",
      risk: "medium",
      deadline: "2026-12-01T17:05:00.000Z",
      url: `http://localhost:8700/approvals#${notice.approvalId}`,
    });
    const header = String(req.headers[SIGNATURE_HEADER.toLowerCase()]);
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    const expected = Buffer.from(`sha256=${createHmac("sha256", SECRET).update(req.body).digest("hex")}`);
    expect(timingSafeEqual(Buffer.from(header), expected)).toBe(true);
    // A receiver with another secret (or a changed body) rejects it.
    expect(header).not.toBe(`sha256=${createHmac("sha256", "another-secret-0123456789").update(req.body).digest("hex")}`);
    expect(header).not.toBe(`sha256=${createHmac("sha256", SECRET).update(req.body.replace("medium", "low")).digest("hex")}`);
    expect(logs).toEqual([]);
  });

  it("a failing receiver is logged, not thrown, and not retried (one request only)", async () => {
    const { url, received } = await receiver(500);
    const logs: string[] = [];
    const hook = createApprovalWebhook({ url, secret: SECRET, publicUrl: "http://localhost:8700", log: (l) => logs.push(l) });
    expect(await hook.notify(notice)).toBe("failed");
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toHaveLength(1);
    expect(logs.join("\n")).toContain("answered 500");
    expect(logs.join("\n")).not.toContain(SECRET);
  });

  it("a receiver that never answers is cut at the timeout; beyond the in-flight cap notices are dropped, not queued", async () => {
    const { url, received } = await receiver("hang");
    const logs: string[] = [];
    const hook = createApprovalWebhook({ url, secret: SECRET, publicUrl: "http://localhost:8700", timeoutMs: 300, maxInFlight: 1, log: (l) => logs.push(l) });
    const first = hook.notify(notice);
    expect(await hook.notify({ ...notice, approvalId: "33333333-3333-4333-8333-333333333333" })).toBe("dropped");
    expect(await first).toBe("failed");
    expect(logs.join("\n")).toMatch(/timed out after 300 ms/);
    expect(logs.join("\n")).toContain("dropped");
    expect(received.length).toBeLessThanOrEqual(1);
  });

  it("a refused connection (nothing listening) is logged, not thrown", async () => {
    const { url } = await receiver(200);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    const logs: string[] = [];
    const hook = createApprovalWebhook({ url, secret: SECRET, publicUrl: "http://localhost:8700", log: (l) => logs.push(l) });
    expect(await hook.notify(notice)).toBe("failed");
    expect(logs).toHaveLength(1);
  });
});

describe("approval webhook: what a receiver renders cannot mislead", () => {
  it("host, operation, user and passkey names carry invisible and bidi characters as visible escapes", () => {
    const body = JSON.parse(webhookBody({ ...notice, host: "web\u202e1-dorp", operation: "run\u200b_command" }, "https://hub.example")) as Record<string, string>;
    expect(body["host"]).toBe("web\\u202e1-dorp");
    expect(body["operation"]).toBe("run\\u200b_command");
    const added = JSON.parse(passkeyAddedBody({ username: "ali\u200bce", passkeyName: "key\u2066", credentialId: "c", addedAt: new Date(0) }, "https://hub.example")) as Record<string, string>;
    expect([added["admin"], added["passkey_name"]]).toEqual(["ali\\u200bce", "key\\u2066"]);
  });
});
