import type { Metadata } from "next";
import type { ReactNode } from "react";
import { TrpcProviders } from "./_components/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: "Leasehold admin",
  description: "Approve agent actions, enrol hosts, audit the ledger.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <strong>Leasehold</strong> <span className="muted">admin</span>
        </header>
        <main>
          <TrpcProviders>{children}</TrpcProviders>
        </main>
      </body>
    </html>
  );
}
