/*
 * Leasehold's service worker (registered by the account page's
 * Notifications card, app/(admin)/account/push-card.tsx). It does two things:
 * shows a push message about a held action as a system notification, and
 * opens the action's approval card when the notification is clicked. It
 * caches nothing and intercepts no request.
 *
 * The payload (server/push/notifier.ts) is decrypted by the browser before
 * it gets here. The link it opens is always on this hub's own origin: a
 * payload naming another origin is opened as this origin's approvals page.
 */
/* global self */
"use strict";

function cardUrl(data) {
  const fallback = new URL("/approvals", self.location.origin);
  if (data === null || typeof data.url !== "string") return fallback.href;
  try {
    const target = new URL(data.url, self.location.origin);
    if (target.origin === self.location.origin) return target.href;
    fallback.hash = target.hash;
  } catch {
    // An unreadable URL: the approvals page lists every held action.
  }
  return fallback.href;
}

self.addEventListener("push", (event) => {
  let data;
  try {
    data = event.data === null ? null : event.data.json();
  } catch {
    data = null;
  }
  const held = data !== null && data.type === "approval.requested";
  // Every push shows a notification: browsers revoke a subscription whose pushes show nothing.
  const title = held && typeof data.title === "string" ? data.title : "Leasehold";
  const options = {
    body: held && typeof data.body === "string" ? data.body : "An action may wait for your approval.",
    tag: held && typeof data.approval_id === "string" ? data.approval_id : "leasehold",
    requireInteraction: true,
    data: { url: cardUrl(data) },
  };
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = event.notification.data && typeof event.notification.data.url === "string" ? event.notification.data.url : new URL("/approvals", self.location.origin).href;
  event.waitUntil(self.clients.openWindow(url));
});
