"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "./trpc";

export interface NavItem {
  href: string;
  label: string;
}

/** The admin's top bar: sections the role may open, who is signed in, sign-out. */
export function AdminNav({ items, username, role }: { items: readonly NavItem[]; username: string; role: string }) {
  const pathname = usePathname();
  const trpc = useTRPC();
  const signOut = useMutation(trpc.auth.signOut.mutationOptions({ onSettled: () => window.location.assign("/sign-in") }));
  const current = (href: string) => (href === "/" ? pathname === "/" : pathname === href || pathname.startsWith(`${href}/`));
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
        <Link href="/account" data-testid="signed-in-as" aria-current={current("/account") ? "page" : undefined} title="Your account: password and passkeys">
          {username} <span className="muted">({role})</span>
        </Link>
        <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </div>
    </header>
  );
}
