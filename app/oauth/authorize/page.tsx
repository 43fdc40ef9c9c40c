import { redirect } from "next/navigation";
import { ROLES } from "~/server/admins";
import { getHubRuntime } from "~/server/hub/runtime";
import { knownToolNames } from "~/server/mcp";
import { beginAuthorization, DEFAULT_GRANT_LIFETIME_S, GRANT_LIFETIMES_S, oauthContext, SCOPE_MEANING } from "~/server/oauth";
import { Badge, Card, ErrorState } from "../../_components/ui";
import { currentAdmin } from "../../_lib/session";
import { ConsentForm } from "./consent-form";

export const dynamic = "force-dynamic";

type Search = Record<string, string | string[] | undefined>;

/** The query exactly as sent, repeated parameters kept (a parameter sent twice is an error the check must see). */
function queryOf(search: Search): URLSearchParams {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(search)) {
    if (Array.isArray(value)) for (const v of value) query.append(key, v);
    else if (value !== undefined) query.append(key, value);
  }
  return query;
}

/**
 * OAuth authorization endpoint (server/oauth/authorize.ts): a signed-in
 * owner sees who asks for what and decides. Visitors sign in first and come
 * back here with the same query.
 */
export default async function AuthorizePage({ searchParams }: { searchParams: Promise<Search> }) {
  const query = queryOf(await searchParams);
  const session = await currentAdmin();
  if (session === undefined) redirect(`/sign-in?next=${encodeURIComponent(`/oauth/authorize?${query.toString()}`)}`);
  if (session.mustChangePassword) redirect("/change-password");
  if (!(ROLES.owner as readonly string[]).includes(session.role)) {
    return (
      <main>
        <div className="form-narrow">
          <h1>Authorization needs an owner</h1>
          <ErrorState>Only an admin with the owner role can let an MCP client act on this hub; you are signed in as {session.role}.</ErrorState>
        </div>
      </main>
    );
  }
  const runtime = await getHubRuntime();
  const tools = knownToolNames();
  const result = await beginAuthorization(oauthContext(runtime, tools), query, { adminId: session.adminId, username: session.username });
  if (result.kind === "redirect") redirect(result.location);
  if (result.kind === "error") {
    return (
      <main>
        <div className="form-narrow">
          <h1>{result.title}</h1>
          <ErrorState>{result.message}</ErrorState>
          <p className="hint">Nothing was granted, and the browser was not sent back to the client. Start again from the MCP client.</p>
        </div>
      </main>
    );
  }
  const p = result.pending;
  return (
    <main>
      <div className="form-narrow consent">
        <h1>Authorize {p.client.name}</h1>
        {p.nameWarnings.map((warning) => (
          <p key={warning} className="state state-error" role="alert" data-testid="client-name-warning">
            <Badge tone="warn">Check the name</Badge> {warning}
          </p>
        ))}
        <p className="muted">An MCP client asks to act on this Leasehold hub as an agent. Every call it makes still goes through policy, risk assessment and approvals.</p>
        <Card title="Client">
          <dl className="facts">
            <dt>Client id</dt>
            <dd>
              <code>{p.client.id}</code>
            </dd>
            <dt>Registered</dt>
            <dd>{p.client.kind === "cimd" ? "by its metadata document (the id above is its URL)" : p.client.kind === "dynamic" ? "dynamically (RFC 7591), unverified" : `by an admin`}</dd>
            <dt>Sends you back to</dt>
            <dd>
              <code>{p.redirectTarget}</code>
            </dd>
            <dt>Token audience</dt>
            <dd>
              <code>{p.resource}</code>
            </dd>
          </dl>
        </Card>
        <ConsentForm
          handle={p.handle}
          scopes={p.scopes.map((s) => ({ scope: s, meaning: SCOPE_MEANING[s] }))}
          canWrite={p.scopes.includes("mcp:write")}
          askedObserveAny={p.scopes.includes("mcp:observe-any")}
          tools={tools}
          lifetimes={[...GRANT_LIFETIMES_S]}
          defaultLifetime={DEFAULT_GRANT_LIFETIME_S}
          expiresAt={p.expiresAt.toISOString()}
        />
      </div>
    </main>
  );
}
