/**
 * Chromium's virtual authenticator (CDP WebAuthn domain) for the specs that
 * sign with a passkey: ctap2 over the internal transport, a resident key, the
 * user verified and present without a prompt — what a platform authenticator
 * with a fingerprint reader gives a person.
 */
import type { Page } from "@playwright/test";

/** Adds a virtual authenticator to `page`'s browser context; registrations and assertions then succeed without a prompt. */
export async function virtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
}
