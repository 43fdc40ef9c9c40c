/**
 * What `bin/leasehold-guest.mjs` runs: the guest agent's CLI (agent-guest/).
 * `npm run build` bundles it into dist/leasehold-guest.mjs.
 */
import { guestMain } from "../agent-guest/cli";

export function run(argv: string[]): Promise<number> {
  return guestMain(argv);
}
