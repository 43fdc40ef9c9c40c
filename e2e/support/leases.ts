import { leaseholdCli } from "./admins";

/**
 * Other specs share this hub, and an agent of theirs may still hold host
 * "local" under an exclusive lease until it lapses idle (minutes): break
 * any such lease first, as an admin would (`leasehold lease break`, sealed),
 * so a spec's agent does not wait out someone else's HOST_BUSY. A lease
 * that ends between the listing and its break (its holder released it, or
 * it lapsed) answers NOT_FOUND: it is free then, which is all this wants.
 */
export function freeHostLocal(as: string): void {
  for (const line of leaseholdCli(["lease", "list"]).split("\n")) {
    const id = /^([0-9a-f-]{36}) {2}local /.exec(line)?.[1];
    if (id === undefined) continue;
    try {
      leaseholdCli(["lease", "break", id, "--as", as]);
    } catch (error) {
      const said = `${String((error as { stdout?: unknown }).stdout ?? "")}${String((error as { stderr?: unknown }).stderr ?? "")}`;
      if (!/\bNOT_FOUND\b/.test(said)) throw error;
    }
  }
}
