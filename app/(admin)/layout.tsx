import type { ReactNode } from "react";
import type { AdminRole } from "~/server/admins";
import { AdminNav, type NavItem } from "../_components/admin-nav";
import { requireAdminPage } from "../_lib/session";

export const dynamic = "force-dynamic";

/** Sections and who sees them (the procedures behind each enforce the same roles). */
const SECTIONS: readonly (NavItem & { roles: readonly AdminRole[] })[] = [
  { href: "/", label: "Dashboard", roles: ["owner", "approver", "auditor"] },
  { href: "/approvals", label: "Approvals", roles: ["owner", "approver"] },
  { href: "/actions", label: "Actions", roles: ["owner", "approver", "auditor"] },
  { href: "/hosts", label: "Hosts", roles: ["owner", "approver"] },
  { href: "/tokens", label: "Tokens", roles: ["owner"] },
  { href: "/oauth-clients", label: "OAuth clients", roles: ["owner"] },
  { href: "/grants", label: "Grants", roles: ["owner", "approver"] },
  { href: "/console", label: "Console", roles: ["owner"] },
  { href: "/audit", label: "Audit", roles: ["owner", "approver", "auditor"] },
  { href: "/users", label: "Users", roles: ["owner"] },
];

export default async function AdminLayout({ children }: { children: ReactNode }) {
  // Only decides between the shell and sign-in; the nav learns who is signed in through the API.
  await requireAdminPage();
  return (
    <>
      {/* The first Tab stop: past the navigation to the page's own content. */}
      <a className="skip-link" href="#main">
        Skip to main content
      </a>
      <AdminNav sections={SECTIONS} />
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
