import pkg from "../../package.json";

/** The hub's version, from package.json (the one source of truth). */
export const HUB_VERSION: string = pkg.version;
