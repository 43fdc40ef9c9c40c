/** Types for build.mjs. */
export declare function buildBpfDriver(dir: string): { driver: string; ran: string; ldso: string; deps: { guest: string; host: string }[] };
