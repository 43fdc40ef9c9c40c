/**
 * Regenerates the committed proof vectors:
 *   npx tsx server/ledger/testdata/generate-vectors.ts
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { serializeVectors } from "./generate-vectors-format";
import { buildConsistencyVectors, buildInclusionVectors } from "./vectors";

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));

writeFileSync(here("./inclusion.json"), serializeVectors(buildInclusionVectors()));
writeFileSync(here("./consistency.json"), serializeVectors(buildConsistencyVectors()));
