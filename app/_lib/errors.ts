/** What a person reads when a tRPC call fails: the stable code and the hub's message. */
export function errorText(error: unknown): string {
  const e = error as { message?: string; data?: { leasehold?: { code?: string; message?: string; hint?: string } | null } } | null;
  const leasehold = e?.data?.leasehold;
  if (leasehold?.code !== undefined) return `${leasehold.code}: ${leasehold.message ?? ""}${leasehold.hint ? ` (${leasehold.hint})` : ""}`;
  return e?.message ?? "something went wrong";
}

/** True when the hub said the session is gone (expired, signed out elsewhere, account disabled). */
export function isSignedOut(error: unknown): boolean {
  return (error as { data?: { code?: string } } | null)?.data?.code === "UNAUTHORIZED";
}
