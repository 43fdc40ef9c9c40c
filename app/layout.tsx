import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { TrpcProviders } from "./_components/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: "Leasehold admin",
  description: "Approve agent actions, enrol hosts, audit the ledger.",
};

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
