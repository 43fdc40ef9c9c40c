import { createRouter } from "./init";
import { consoleRouter } from "./routers/console";
import { healthRouter } from "./routers/health";
import { ledgerRouter } from "./routers/ledger";

export const appRouter = createRouter({
  console: consoleRouter,
  health: healthRouter,
  ledger: ledgerRouter,
});

export type AppRouter = typeof appRouter;
