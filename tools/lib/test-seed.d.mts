export const SEED_VARIABLE: "LEASEHOLD_TEST_SEED";
export function givenSeed(env?: Record<string, string | undefined>): number | undefined;
export function chooseSeed(env?: Record<string, string | undefined>): number;
export function seedLine(seed: number): string;
