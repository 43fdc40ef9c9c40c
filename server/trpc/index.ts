export { appRouter } from "./root";
export type { AppRouter } from "./root";
export { createTrpcContext } from "./init";
export type { TrpcContext } from "./init";
