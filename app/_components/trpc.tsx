"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import type { AppRouter } from "~/server/trpc";
import { isSignedOut } from "../_lib/errors";
import { sessionBindingHeaders } from "../_lib/session-binding";

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

/** A call that finds the session gone sends the person back to sign-in, returning here afterwards. */
function backToSignIn(error: unknown): void {
  if (!isSignedOut(error) || typeof window === "undefined" || window.location.pathname === "/sign-in") return;
  window.location.assign(`/sign-in?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
}

export function TrpcProviders({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        queryCache: new QueryCache({ onError: backToSignIn }),
        mutationCache: new MutationCache({ onError: backToSignIn }),
        defaultOptions: { queries: { staleTime: 5_000, retry: (count, error) => !isSignedOut(error) && count < 1 } },
      }),
  );
  const [trpcClient] = useState(() => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "/api/trpc", headers: sessionBindingHeaders })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
