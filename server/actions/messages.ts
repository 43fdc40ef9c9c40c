/**
 * Refusal words the pipeline and the token revocation both give an action
 * (the revocation cancels through server/actions, so the words live here,
 * on the lower side of that import).
 */
export const TOKEN_REVOKED_MESSAGE = "the agent token that submitted this action was revoked; it does not run (refused by a hub check)";
