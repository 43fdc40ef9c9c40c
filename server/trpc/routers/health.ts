import { readHealth } from "../../health/read-health";
import { createRouter, publicProcedure } from "../init";

export const healthRouter = createRouter({
  get: publicProcedure.query(({ ctx }) => readHealth(ctx.runtime)),
});
