/**
 * The rule a rollback's verdict carries (server/policy/assess-action.ts). The
 * decision table holds such a verdict for a person whatever grants exist
 * (server/policy/decide.ts): a rollback replaces a host path's tree with an
 * older one (docs/design.md#host-paths).
 */
export const ROLLBACK_RULE = "host_path.rollback";
