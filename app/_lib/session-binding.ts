/**
 * The page's half of session binding (server/admins/sessions.ts): the
 * secret a sign-in returns is kept in localStorage, which is scoped to the
 * origin — scheme, host AND port — unlike the cookie, which every server on
 * the hub's host name receives. Every tRPC call and the audit download send
 * it as a header. localStorage rather than sessionStorage so a second tab of
 * the same hub works; sign-out removes it.
 */
import { SESSION_BINDING_HEADER } from "~/server/admins/binding-header";

const KEY = "leasehold.session-binding";

export function storeSessionBinding(binding: string): void {
  window.localStorage.setItem(KEY, binding);
}

export function clearSessionBinding(): void {
  if (typeof window !== "undefined") window.localStorage.removeItem(KEY);
}

/** The header to send (empty when signed out or rendering on the server). */
export function sessionBindingHeaders(): Record<string, string> {
  if (typeof window === "undefined") return {};
  const binding = window.localStorage.getItem(KEY);
  return binding === null ? {} : { [SESSION_BINDING_HEADER]: binding };
}
