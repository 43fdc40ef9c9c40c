import { inArray } from "drizzle-orm";
import type { Database } from "../db";
import { adminUsers, agentTokens, approvals, capabilities, hosts, ledgerWitnesses, oauthClients } from "../db/schema";
import { digestOf, hashActor } from "../ledger/entry";

/**
 * Names for what the ledger stores as digests and ids, so an auditor reads
 * "admin alice" rather than `sha256:c40b01d2…`.
 *
 * The ledger keeps actors pseudonymous (`hashActor`, docs/design.md#ledger):
 * an export alone names nobody. The hub, which holds the rows the digests
 * were made from, can recompute them and say whose they are — to a signed-in
 * reader only, and without changing a byte of the log. A digest nobody here
 * made (a deleted token, an actor from another hub) stays a digest: the
 * directory is built by hashing what exists, never by guessing.
 */

export type AuditNameKind = "admin" | "token" | "host" | "system" | "capability" | "approval" | "oauth-client" | "witness";

export interface AuditName {
  /** What the log stores: a `sha256:` digest, or an id (`host_id`, `token_id`). */
  value: string;
  kind: AuditNameKind;
  /** For people: "admin alice", "token ci-bot", "host local". */
  label: string;
  /** The page that shows it, when there is one. */
  href: string | null;
}

/**
 * The fixed system actors (`hashActor("system", …)` across the hub). A CLI
 * run as an operating-system user (`cli:<user>`) is not listed: its digest
 * names a local account the hub has no list of.
 */
const SYSTEM_ACTORS = ["hub", "cli", "first-start", "leasehold start", "approval-deadline"] as const;

export type NameDirectory = ReadonlyMap<string, AuditName>;

/**
 * Every name the hub can vouch for, keyed by the value the log stores.
 * `actionIds` adds the approvals of those actions (their `approval:<id>`
 * target digests); approvals are many, so only the ones a page shows.
 */
export async function nameDirectory(db: Database, options: { actionIds?: readonly string[] } = {}): Promise<NameDirectory> {
  const uuids = (options.actionIds ?? []).filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id));
  const [admins, tokens, hostRows, capabilityRows, clients, witnesses, approvalRows] = await Promise.all([
    db.select({ id: adminUsers.id, username: adminUsers.username }).from(adminUsers),
    db.select({ id: agentTokens.id, name: agentTokens.name, kind: agentTokens.kind }).from(agentTokens),
    db.select({ id: hosts.id, name: hosts.name }).from(hosts),
    db.select({ id: capabilities.id }).from(capabilities),
    db.select({ id: oauthClients.id, name: oauthClients.name }).from(oauthClients),
    db.select({ name: ledgerWitnesses.name, verifierKey: ledgerWitnesses.verifierKey }).from(ledgerWitnesses),
    uuids.length === 0 ? Promise.resolve([]) : db.select({ id: approvals.id, actionId: approvals.actionId }).from(approvals).where(inArray(approvals.actionId, uuids)),
  ]);
  const directory = new Map<string, AuditName>();
  const add = (value: string, kind: AuditNameKind, label: string, href: string | null) => directory.set(value, { value, kind, label, href });
  for (const a of admins) add(hashActor("admin", a.id), "admin", `admin ${a.username}`, "/users");
  for (const t of tokens) {
    const label = `${t.kind === "oauth" ? "OAuth grant" : "token"} ${t.name}`;
    add(hashActor("token", t.id), "token", label, "/tokens");
    add(t.id, "token", label, "/tokens");
  }
  for (const h of hostRows) {
    add(hashActor("host", h.id), "host", `host ${h.name}`, "/hosts");
    add(h.id, "host", `host ${h.name}`, "/hosts");
  }
  for (const name of SYSTEM_ACTORS) add(hashActor("system", name), "system", `system (${name})`, null);
  for (const c of capabilityRows) add(digestOf(`capability:${c.id}`), "capability", `capability ${c.id}`, "/capabilities");
  for (const c of clients) add(digestOf(c.id), "oauth-client", `OAuth client ${c.name}`, "/oauth-clients");
  for (const w of witnesses) add(digestOf(w.verifierKey), "witness", `witness ${w.name}`, null);
  for (const a of approvalRows) add(digestOf(`approval:${a.id}`), "approval", `approval of action ${a.actionId.slice(0, 8)}`, `/actions/${a.actionId}`);
  return directory;
}

/** Names of every string in `value` (an entry's JSON) the directory knows, each once, in order of appearance. */
export function namesIn(value: unknown, directory: NameDirectory): AuditName[] {
  const found = new Map<string, AuditName>();
  const visit = (v: unknown, depth: number) => {
    if (depth > 8) return;
    if (typeof v === "string") {
      const name = directory.get(v);
      if (name !== undefined) found.set(v, name);
    } else if (Array.isArray(v)) {
      for (const item of v) visit(item, depth + 1);
    } else if (v !== null && typeof v === "object") {
      for (const item of Object.values(v as Record<string, unknown>)) visit(item, depth + 1);
    }
  };
  visit(value, 0);
  return [...found.values()];
}

/**
 * The stored actor digests whose names contain `fragment` (case-insensitive),
 * for the actor filter. A fragment written as a digest (`sha256:…`) is not
 * matched here: the caller filters on the stored value by prefix.
 */
export function actorsMatching(fragment: string, directory: NameDirectory): string[] {
  const needle = fragment.toLowerCase();
  const actorKinds: readonly AuditNameKind[] = ["admin", "token", "host", "system"];
  return [...directory.values()].filter((n) => n.value.startsWith("sha256:") && actorKinds.includes(n.kind) && n.label.toLowerCase().includes(needle)).map((n) => n.value);
}
