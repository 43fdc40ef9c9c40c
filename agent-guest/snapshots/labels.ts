/**
 * Which "rw" labels a lease holds on this guest (docs/design.md#snapshots).
 * The hub takes a label's lease exclusive; the guest holds the same rule on
 * its own, so a second job writing (or rolling back) a label while another
 * does is HOST_BUSY here too, whatever the hub decided.
 */
import { LeaseholdError } from "../../server/trust";

const held = new Map<string, string>();

/** Takes every label for `holder`, all or none; HOST_BUSY naming the first one held. */
export function holdLabels(labels: readonly string[], holder: string): () => void {
  for (const label of labels) {
    const by = held.get(label);
    if (by !== undefined) {
      throw new LeaseholdError("HOST_BUSY", `host path ${label} is held read-write by another job on this host; try again when it ends`, { tier: "guest", details: { label } });
    }
  }
  for (const label of labels) held.set(label, holder);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const label of labels) if (held.get(label) === holder) held.delete(label);
  };
}
