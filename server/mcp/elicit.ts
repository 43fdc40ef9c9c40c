import { randomUUID } from "node:crypto";
import { ElicitResultSchema, type ClientCapabilities, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ToolContext } from "./tools/tool";

/**
 * URL-mode elicitation (MCP 2025-11-25): while a tools/call waits for a
 * person's approval, the hub asks the client to show the person at the
 * agent's screen the approval card's URL — `elicitation/create` with
 * `mode: "url"`, sent on the call's own stream.
 *
 * Only to a client that declared `capabilities.elicitation.url`: a client
 * declaring `elicitation: {}` (the older form, which means form mode only) or
 * `elicitation.form` alone gets nothing, as the specification requires.
 *
 * The answer changes nothing, by design:
 *   - the call never waits for it: the action proceeds the moment a person
 *     approves in the browser or the CLI, whether or not the client ever
 *     answers;
 *   - `decline` or `cancel` does not cancel the action. The answer comes from
 *     the agent's client, which the hub does not trust to speak for the
 *     approver (a client, or the model driving it, could answer on its own);
 *     and a person at the agent's screen who declines to open a link has not
 *     decided about the action — the approver may be someone else, elsewhere.
 *     Decisions are made signed in, on the card, and nowhere else
 *     (docs/design.md#approvals);
 *   - `accept` means only that the client opened (or offered) the link.
 *
 * The message is built from the hub's own words and the action id, never from
 * the caller's strings: a client shows it beside a link, and a command chosen
 * to read as an instruction must not appear there. The link carries no
 * credential: the card asks the person to sign in.
 */

/** Whether the client declared URL-mode elicitation in `initialize`. */
export function declaresUrlElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  const url = elicitation?.["url"];
  return url !== undefined && url !== null && typeof url === "object";
}

/** Keys (approval ids) a session remembers having offered, so repeated approval_wait calls do not ask again. */
const OFFERED_PER_SESSION = 256;

type SendRequest = (request: ServerRequest, schema: typeof ElicitResultSchema) => Promise<unknown>;
type SendNotification = (notification: ServerNotification) => Promise<void>;

/**
 * `ToolContext.offerUrl` for one tools/call: `capabilities` is read when the
 * offer is made (the session's `initialize`), `offered` is the session's
 * memory of what it was already shown.
 */
export function urlOffer(capabilities: () => ClientCapabilities | undefined, offered: Set<string>, sendRequest: SendRequest, sendNotification: SendNotification): ToolContext["offerUrl"] {
  return ({ key, url, message }) => {
    if (!declaresUrlElicitation(capabilities()) || offered.has(key)) return undefined;
    if (offered.size >= OFFERED_PER_SESSION) offered.delete(offered.values().next().value as string);
    offered.add(key);
    const elicitationId = randomUUID();
    // Not awaited: the answer (or its absence, or the client's timeout) never touches the action.
    sendRequest({ method: "elicitation/create", params: { mode: "url", elicitationId, url, message } }, ElicitResultSchema).catch(() => undefined);
    let completed = false;
    return () => {
      if (completed) return;
      completed = true;
      sendNotification({ method: "notifications/elicitation/complete", params: { elicitationId } }).catch(() => undefined);
    };
  };
}
