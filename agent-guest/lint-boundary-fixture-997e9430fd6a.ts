import { openPostgres } from "../server/db";
export const open = openPostgres;
