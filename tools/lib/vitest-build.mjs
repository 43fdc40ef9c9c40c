// vitest's global set-up: tests spawn bin/leasehold.mjs and
// bin/leasehold-guest.mjs, which run only the compiled dist/ and refuse when
// it is older than the sources; compile it first (a no-op when unchanged,
// under the same lock as `npm run build`).
import { ensureExecutables } from "../build.mjs";

export default async function setup() {
  await ensureExecutables();
}
