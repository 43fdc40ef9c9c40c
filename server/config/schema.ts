import { z } from "zod";

/**
 * Every environment variable the hub reads. A `LEASEHOLD_*` variable that is
 * not listed here is refused at start-up: a typo such as `LEASEHOLD_PROT`
 * must not silently leave the default in force.
 */
export const KNOWN_VARIABLES = [
  "LEASEHOLD_HOST",
  "LEASEHOLD_PORT",
  "LEASEHOLD_DATA_DIR",
  "LEASEHOLD_PUBLIC_URL",
  "DATABASE_URL",
] as const;

export type KnownVariable = (typeof KNOWN_VARIABLES)[number];

const hostname = z
  .string()
  .min(1, "must not be empty")
  .max(253)
  .regex(/^(?:[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?)$/, "must be an IP address or a host name");

const port = z
  .string()
  .regex(/^\d{1,5}$/, "must be a whole number between 1 and 65535")
  .transform(Number)
  .refine((n) => n >= 1 && n <= 65535, "must be a whole number between 1 and 65535");

const databaseUrl = z
  .string()
  .min(1, "must not be empty (unset it to use the embedded database)")
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.hostname !== "";
    } catch {
      return false;
    }
  }, "must be a postgres:// or postgresql:// URL with a host");

const publicUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === "";
    } catch {
      return false;
    }
  }, "must be an http:// or https:// URL without query or fragment");

const dataDir = z.string().min(1, "must not be empty").max(4096);

/** The raw variables, each optional with its documented default. */
export const environmentSchema = z.object({
  LEASEHOLD_HOST: hostname.default("127.0.0.1"),
  LEASEHOLD_PORT: port.default(8700),
  LEASEHOLD_DATA_DIR: dataDir.default("./.leasehold"),
  LEASEHOLD_PUBLIC_URL: publicUrl.optional(),
  DATABASE_URL: databaseUrl.optional(),
});

export type Environment = z.output<typeof environmentSchema>;
