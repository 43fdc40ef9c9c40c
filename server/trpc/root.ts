import { createRouter } from "./init";
import { healthRouter } from "./routers/health";
import { ledgerRouter } from "./routers/ledger";

export const appRouter = createRouter({
  health: healthRouter,
  ledger: ledgerRouter,
});

export type AppRouter = typeof appRouter;
