import type { HubRuntime } from "../hub/runtime";
import { adminUrlFor, passkeySettingsOf } from "../passkeys/relying-party";
import type { OAuthContext } from "./authorize";
import { clientResolver, type ClientResolver } from "./clients";

/**
 * One client resolver (and so one Client ID Metadata Document cache) per
 * process and runtime, on globalThis: the Next.js route bundles each have
 * their own module copies.
 */
const KEY = Symbol.for("leasehold.oauth.resolver");

interface Held {
  runtime: HubRuntime;
  resolver: ClientResolver;
}

/**
 * The host name a person opens the admin pages at (the admin URL the hub
 * prints: http://localhost:PORT by default). Its cookies go to every port
 * of that name, so no client's redirect URI may be on it.
 */
export function adminHostOf(config: { publicUrl: string; host?: string; port?: number; publicUrlSet?: boolean }): string {
  return new URL(adminUrlFor(passkeySettingsOf(config), config.publicUrlSet === true)).hostname;
}

export function oauthContext(runtime: HubRuntime, knownTools: readonly string[]): OAuthContext {
  const g = globalThis as unknown as Record<symbol, Held | undefined>;
  let held = g[KEY];
  if (held === undefined || held.runtime !== runtime) {
    held = { runtime, resolver: clientResolver(runtime.config.oauth?.clientUrlAllow ?? []) };
    g[KEY] = held;
  }
  return { db: runtime.database.handle.db, publicUrl: runtime.config.publicUrl, adminHost: adminHostOf(runtime.config), resolver: held.resolver, knownTools };
}
