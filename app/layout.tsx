import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { TrpcProviders } from "./_components/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: "Leasehold admin",
  description: "Approve agent actions, enrol hosts, audit the ledger.",
};

// Every page is rendered per request: proxy.ts gives each render its own CSP nonce,
// which a prerendered page could not carry.
export const dynamic = "force-dynamic";

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TrpcProviders>{children}</TrpcProviders>
      </body>
    </html>
  );
}
