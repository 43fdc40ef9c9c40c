/**
 * What a person reads when a tRPC call fails: the hub's message and hint, in
 * words. The stable code (`INVALID_ARGUMENT`, …) is for programs and the
 * audit trail; `errorCode` gives it to a page that branches on it.
 */
export function errorText(error: unknown): string {
  const e = error as { message?: string; data?: { leasehold?: { code?: string; message?: string; hint?: string } | null } } | null;
  const leasehold = e?.data?.leasehold;
  if (leasehold?.code !== undefined) {
    const message = (leasehold.message ?? "").trim();
    const sentence = message.length === 0 ? "The hub refused this." : `${message.charAt(0).toUpperCase()}${message.slice(1)}`;
    return `${sentence}${leasehold.hint ? ` (${leasehold.hint})` : ""}`;
  }
  return e?.message ?? "something went wrong";
}

/** The hub's stable error code, when the failure carries one. */
export function errorCode(error: unknown): string | null {
  return (error as { data?: { leasehold?: { code?: string } | null } } | null)?.data?.leasehold?.code ?? null;
}

/** True when the hub said the session is gone (expired, signed out elsewhere, account disabled). */
export function isSignedOut(error: unknown): boolean {
  return (error as { data?: { code?: string } } | null)?.data?.code === "UNAUTHORIZED";
}
