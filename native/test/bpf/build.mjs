// Builds the lease allow-list test driver (driver.c, linked statically with
// the real loader native/src/bpf_guard.c, the bpf/ skeletons and libbpf) and
// its dynamic exec target (ran.c). One build for both places the driver runs:
// natively (driver.test.ts) and in the VM (../vm/bpf-lsm.mjs). Node builtins only.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bpfGuardArgs, dynamicDeps, gcc, STATIC_CFLAGS } from "../vm/run.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Builds into `dir`. Returns { driver, ran, ldso, deps }: the static driver,
 * the dynamic target, the dynamic loader ran's PT_INTERP names, and every
 * shared object ran loads (for a guest).
 */
export function buildBpfDriver(dir) {
  mkdirSync(dir, { recursive: true });
  const driver = join(dir, "lh-bpf-driver");
  const ran = join(dir, "lh-bpf-ran");
  gcc([...STATIC_CFLAGS, "-o", driver, join(here, "driver.c"), ...bpfGuardArgs()]);
  gcc(["-std=gnu11", "-O2", "-Wall", "-Wextra", "-o", ran, join(here, "ran.c")]);
  const deps = dynamicDeps(ran);
  const interp = deps.find((d) => /\/ld-linux[^/]*\.so/.test(d.host));
  if (!interp) throw new Error(`ldd ${ran} names no dynamic loader`);
  return { driver, ran, ldso: interp.host, deps };
}
