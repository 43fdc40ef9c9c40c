// The seed of vitest's shuffled order (vitest.config.ts sets
// `sequence.shuffle`). One parser for `npm test` (tools/test.mjs, which picks
// a seed when none is given and prints it) and for vitest.config.ts (so
// `LEASEHOLD_TEST_SEED=N npx vitest run <files>` repeats an order too).
import { randomInt } from "node:crypto";

export const SEED_VARIABLE = "LEASEHOLD_TEST_SEED";

/** The seed LEASEHOLD_TEST_SEED names, undefined when unset or empty; throws on anything but a whole number. */
export function givenSeed(env = process.env) {
  const raw = env[SEED_VARIABLE];
  if (raw === undefined || raw === "") return undefined;
  // Whole numbers only, and small enough to stay exact as a JavaScript number.
  if (!/^\d{1,15}$/.test(raw)) throw new Error(`${SEED_VARIABLE} must be a whole number (the seed a test run printed), not ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** The given seed, or a fresh random one. */
export function chooseSeed(env = process.env) {
  return givenSeed(env) ?? randomInt(1, 2 ** 31);
}

/** What `npm test` prints so a failing order can be run again. */
export function seedLine(seed) {
  return `[test] shuffle seed ${seed} (rerun with ${SEED_VARIABLE}=${seed})`;
}
