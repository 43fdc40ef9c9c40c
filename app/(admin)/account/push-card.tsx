"use client";
/**
 * Push notifications for held actions (server/push): subscribe this browser,
 * unsubscribe it, remove another of your browsers. The service worker
 * (`/push-sw.js`) is registered when the card opens, so its state is shown
 * before anything is asked; the browser's permission is asked only on the
 * button press. Deciders only: an auditor's card says so.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "../../_components/trpc";
import { EmptyState, ErrorState, Loading } from "../../_components/ui";
import { errorCode, errorText } from "../../_lib/errors";

const WORKER = "/push-sw.js";

type Worker = { state: "unsupported"; why: string } | { state: "registering" } | { state: "registered"; registration: ServiceWorkerRegistration } | { state: "failed"; why: string };

function unsupportedReason(): string | null {
  if (typeof window === "undefined") return "not in a browser";
  if (!window.isSecureContext) return "push needs the hub over HTTPS (or on localhost)";
  if (!("serviceWorker" in navigator)) return "this browser has no service workers";
  if (!("PushManager" in window) || !("Notification" in window)) return "this browser has no Web Push";
  return null;
}

/** The browser's own short description, so the list tells your browsers apart. */
function browserLabel(): string {
  const ua = navigator.userAgent;
  const name = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge" : /Chrome\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "unknown system";
  return `${name} on ${os}`;
}

function useWorker(): Worker {
  const [worker, setWorker] = useState<Worker>({ state: "registering" });
  useEffect(() => {
    const why = unsupportedReason();
    if (why !== null) {
      setWorker({ state: "unsupported", why });
      return;
    }
    navigator.serviceWorker
      .register(WORKER, { scope: "/" })
      .then(() => navigator.serviceWorker.ready)
      .then((registration) => setWorker({ state: "registered", registration }))
      .catch((e: unknown) => setWorker({ state: "failed", why: e instanceof Error ? e.message : String(e) }));
  }, []);
  return worker;
}

// eslint-disable-next-line max-lines-per-function -- subscribe, unsubscribe and the list share the worker's and the browser subscription's state
export function PushCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery({ ...trpc.push.list.queryOptions(), retry: false });
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.push.list.queryKey() });
  const save = useMutation(trpc.push.subscribe.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.push.unsubscribe.mutationOptions({ onSuccess: refresh }));
  const worker = useWorker();
  const [endpoint, setEndpoint] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  useEffect(() => {
    if (worker.state !== "registered") return;
    void worker.registration.pushManager.getSubscription().then((s) => setEndpoint(s?.endpoint ?? null));
  }, [worker]);

  if (list.isPending) return <Loading what="push notifications" />;
  if (list.isError) {
    if (errorCode(list.error) === "FORBIDDEN") return <p className="muted">Push notifications tell approvers and owners that an action waits for them; your role does not decide actions.</p>;
    return <ErrorState>{errorText(list.error)}</ErrorState>;
  }
  const { publicKey, subscriptions } = list.data;

  const subscribe = async () => {
    if (worker.state !== "registered") return;
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      const permission = await Notification.requestPermission();
      if (permission !== "granted") throw new Error(`the browser's notification permission is "${permission}"`);
      const key = Uint8Array.from(atob(publicKey.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
      const subscription = await worker.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      const json = subscription.toJSON() as { endpoint: string; keys: { p256dh: string; auth: string } };
      await save.mutateAsync({ endpoint: json.endpoint, keys: { p256dh: json.keys.p256dh, auth: json.keys.auth }, label: browserLabel() });
      setEndpoint(subscription.endpoint);
      setMessage("This browser will be notified of new held actions.");
    } catch (e) {
      setError(`This browser could not be subscribed: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };

  const unsubscribe = async () => {
    if (worker.state !== "registered" || endpoint === null) return;
    setBusy(true);
    setError(null);
    try {
      const subscription = await worker.registration.pushManager.getSubscription();
      await subscription?.unsubscribe();
      // Already gone on the hub (removed from another browser, or pruned): nothing left to remove.
      await remove.mutateAsync({ endpoint }).catch((e: unknown) => {
        if (errorCode(e) !== "NOT_FOUND") throw e;
      });
      setEndpoint(null);
      setMessage("This browser will no longer be notified.");
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="push" data-testid="push-section">
      <p className="muted">
        Your browser shows a system notification for each new held action — the command, host and risk — even with no Leasehold tab open; clicking it opens the action&apos;s card. The message is encrypted to this browser: the push service that relays it cannot read it.
      </p>
      <p data-testid="push-worker" data-state={worker.state}>
        {worker.state === "registered"
          ? `Service worker: registered (scope ${worker.registration.scope}).`
          : worker.state === "registering"
            ? "Service worker: registering…"
            : `Service worker: not available — ${worker.why}.`}
      </p>
      {worker.state === "registered" ? (
        <div className="form-row">
          {endpoint !== null ? (
            <button type="button" disabled={busy} onClick={() => void unsubscribe()}>
              Stop notifying this browser
            </button>
          ) : (
            <button type="button" className="primary" disabled={busy} onClick={() => void subscribe()}>
              {busy ? "Subscribing…" : "Notify this browser of held actions"}
            </button>
          )}
        </div>
      ) : null}
      {message === null ? null : (
        <p role="status" className="hint">
          {message}
        </p>
      )}
      {error === null ? null : <ErrorState>{error}</ErrorState>}
      {subscriptions.length === 0 ? (
        <EmptyState>No browser of yours is subscribed.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table aria-label="Your subscribed browsers">
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Push service</th>
                <th scope="col">Subscribed</th>
                <th scope="col">Last notified</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {subscriptions.map((s) => (
                <tr key={s.id} data-testid="push-row">
                  <td>{s.label}</td>
                  <td>{s.endpointOrigin}</td>
                  <td>{new Date(s.createdAt).toLocaleString()}</td>
                  <td>{s.lastSentAt === null ? "never" : new Date(s.lastSentAt).toLocaleString()}</td>
                  <td>
                    <button type="button" className="danger" disabled={remove.isPending} aria-label={`Remove ${s.label}`} onClick={() => remove.mutate({ id: s.id })}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
