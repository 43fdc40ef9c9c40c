import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../db";
import { hubSettings } from "../db/schema";
import { appendEntry } from "../ledger/append";
import { digestOfJson, hashActor } from "../ledger/entry";

/**
 * OAuth settings an owner changes in the browser (`/oauth-clients`). Stored
 * in `hub_settings` under one key; each change is sealed as admin/1
 * `oauth.settings` in the same transaction.
 */
const KEY = "oauth";

const settingsSchema = z.strictObject({
  /** RFC 7591 dynamic client registration at /api/oauth/register. */
  dynamicRegistration: z.boolean(),
});
export type OAuthSettings = z.infer<typeof settingsSchema>;

export const DEFAULT_OAUTH_SETTINGS: OAuthSettings = { dynamicRegistration: true };

export async function getOAuthSettings(db: Database): Promise<OAuthSettings> {
  const [row] = await db.select({ value: hubSettings.value }).from(hubSettings).where(eq(hubSettings.key, KEY)).limit(1);
  if (row === undefined) return DEFAULT_OAUTH_SETTINGS;
  const parsed = settingsSchema.safeParse(row.value);
  // A stored value this code cannot read is treated as the safer setting, not the default.
  return parsed.success ? parsed.data : { dynamicRegistration: false };
}

export async function setOAuthSettings(db: Database, settings: OAuthSettings, adminName: string, now = new Date()): Promise<OAuthSettings> {
  const value = settingsSchema.parse(settings);
  await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    await appendEntry(tx, { type: "admin/1", time: now, action_id: null, actor: hashActor("admin", adminName), data: { operation: "oauth.settings", target_digest: null, settings_digest: digestOfJson(value) } });
    await tx
      .insert(hubSettings)
      .values({ key: KEY, value, updatedBy: adminName, updatedAt: now })
      .onConflictDoUpdate({ target: hubSettings.key, set: { value, updatedBy: adminName, updatedAt: now } });
  });
  return value;
}
