/** The export route both the Export button and the in-browser verifier download (server/audit/export-http.ts). */
export const EXPORT_URL = "/api/audit/export";

/** What a person reads when the export download fails: the hub's message, else the HTTP status. */
export async function exportFailure(response: Response): Promise<string> {
  const payload = (await response.json().catch(() => null)) as { message?: string } | null;
  return typeof payload?.message === "string" && payload.message !== "" ? payload.message : `export download failed (HTTP ${response.status})`;
}
