import { describe, expect, it } from "vitest";
import type { ClientCapabilities, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { declaresUrlElicitation, urlOffer } from "./elicit";

describe("declaresUrlElicitation", () => {
  it("is true only for an object under elicitation.url", () => {
    expect(declaresUrlElicitation({ elicitation: { url: {} } })).toBe(true);
    expect(declaresUrlElicitation({ elicitation: { form: {}, url: {} } })).toBe(true);
  });

  it("is false for the older elicitation: {} (form only), form alone, a missing capability, and url values that are not objects", () => {
    expect(declaresUrlElicitation(undefined)).toBe(false);
    expect(declaresUrlElicitation({})).toBe(false);
    expect(declaresUrlElicitation({ elicitation: {} })).toBe(false);
    expect(declaresUrlElicitation({ elicitation: { form: {} } })).toBe(false);
    for (const url of [true, "yes", 1, null]) expect(declaresUrlElicitation({ elicitation: { url } } as unknown as ClientCapabilities), String(url)).toBe(false);
  });
});

describe("urlOffer", () => {
  function harness(capabilities: ClientCapabilities | undefined, answer: Promise<unknown> = Promise.resolve({ action: "accept" })) {
    const requests: ServerRequest[] = [];
    const notifications: ServerNotification[] = [];
    const offered = new Set<string>();
    const offer = urlOffer(
      () => capabilities,
      offered,
      (request) => {
        requests.push(request);
        return answer;
      },
      async (notification) => {
        notifications.push(notification);
      },
    );
    return { requests, notifications, offered, offer };
  }
  const card = { key: "a1", url: "https://hub.example/approvals#a1", message: "open it" };

  it("sends one elicitation/create in url mode per key, and elicitation/complete once with the same id", () => {
    const h = harness({ elicitation: { url: {} } });
    const complete = h.offer(card);
    expect(h.offer(card)).toBeUndefined();
    expect(h.requests).toHaveLength(1);
    const params = h.requests[0]!.params as { mode: string; url: string; elicitationId: string; message: string };
    expect(h.requests[0]!.method).toBe("elicitation/create");
    expect(params).toMatchObject({ mode: "url", url: card.url, message: "open it" });
    complete!();
    complete!();
    expect(h.notifications).toEqual([{ method: "notifications/elicitation/complete", params: { elicitationId: params.elicitationId } }]);
  });

  it("sends nothing to a client without the url capability", () => {
    const h = harness({ elicitation: {} });
    expect(h.offer(card)).toBeUndefined();
    expect(h.requests).toEqual([]);
  });

  it("a rejected or refused answer is absorbed: offering never throws", async () => {
    const h = harness({ elicitation: { url: {} } }, Promise.reject(new Error("client said no")));
    expect(() => h.offer(card)).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
  });

  it("remembers a bounded number of keys", () => {
    const h = harness({ elicitation: { url: {} } });
    for (let i = 0; i < 300; i++) h.offer({ ...card, key: `k${i}` });
    expect(h.offered.size).toBeLessThanOrEqual(256);
    expect(h.requests).toHaveLength(300);
  });
});
