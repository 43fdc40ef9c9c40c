import { defineConfig } from "drizzle-kit";

// Generation only: migrations are applied by the hub at start-up
// (server/db/migrate.ts), never by drizzle-kit against a live database.
export default defineConfig({
  dialect: "postgresql",
  schema: "./server/db/schema/index.ts",
  out: "./drizzle/migrations",
  strict: true,
});
