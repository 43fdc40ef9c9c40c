export function isDebianPackageInstalled(name: string): boolean;
/** Installs the missing ones as root; returns their names. Throws with a one-line reason when it cannot. */
export function ensureDebianPackages(names: string[], opts?: { quiet?: boolean }): string[];
