"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { clearSessionBinding } from "../_lib/session-binding";
import { useTRPC } from "./trpc";

export interface NavItem {
  href: string;
  label: string;
}

/**
 * The admin's top bar: sections the role may open, who is signed in,
 * sign-out. Who is signed in comes from `auth.me` (bound to the session's
 * secret), not from the server-rendered shell, which a bare cookie can load.
 */
export function AdminNav({ sections }: { sections: readonly (NavItem & { roles: readonly string[] })[] }) {
  const pathname = usePathname();
  const trpc = useTRPC();
  const me = useQuery(trpc.auth.me.queryOptions());
  const signedOut = me.isSuccess && me.data === null;
  useEffect(() => {
    // The cookie named a session, but this page holds no binding secret for it: sign in here.
    if (signedOut) window.location.assign(`/sign-in?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
  }, [signedOut]);
  const signOut = useMutation(
    trpc.auth.signOut.mutationOptions({
      onSettled: () => {
        clearSessionBinding();
        window.location.assign("/sign-in");
      },
    }),
  );
  const current = (href: string) => (href === "/" ? pathname === "/" : pathname === href || pathname.startsWith(`${href}/`));
  const role = me.data?.role;
  const items = role === undefined ? [] : sections.filter((s) => s.roles.includes(role));
  return (
    <header className="topbar">
      <Link className="brand" href="/">
        Leasehold
      </Link>
      <nav aria-label="Sections">
        {items.map((item) => (
          <Link key={item.href} href={item.href} aria-current={current(item.href) ? "page" : undefined}>
            {item.label}
          </Link>
        ))}
      </nav>
      <div className="who">
        {me.data ? (
          <Link href="/account" data-testid="signed-in-as" aria-current={current("/account") ? "page" : undefined} title="Your account: password and passkeys">
            {me.data.username} <span className="muted">({me.data.role})</span>
          </Link>
        ) : null}
        <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </div>
    </header>
  );
}
