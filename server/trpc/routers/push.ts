/**
 * Web Push for the signed-in admin's browsers (server/push): the hub's VAPID
 * public key to subscribe with, the admin's subscriptions, subscribing this
 * browser and removing one. Deciders only: a push says a decision waits,
 * and only they decide.
 */
import { z } from "zod";
import { ROLES } from "../../admins";
import { keyDirOf } from "../../hub/identity";
import { listSubscriptions, removeSubscription, saveSubscription, subscriptionInput } from "../../push/subscriptions";
import { loadOrCreateVapidKey } from "../../push/vapid";
import { createRouter, roleProcedure, type TrpcContext } from "../init";
import { channel } from "./channel";

function vapid(ctx: TrpcContext) {
  return ctx.runtime.keys?.vapid ?? loadOrCreateVapidKey(keyDirOf(ctx.runtime.config));
}

export const pushRouter = createRouter({
  /** The VAPID public key (`applicationServerKey`) and the admin's subscribed browsers. */
  list: roleProcedure(ROLES.deciders).query(({ ctx }) =>
    channel(async () => ({ publicKey: vapid(ctx).publicKey, subscriptions: await listSubscriptions(ctx.runtime.database.handle.db, ctx.session.adminId) })),
  ),
  subscribe: roleProcedure(ROLES.deciders)
    .input(subscriptionInput)
    .mutation(({ ctx, input }) => channel(() => saveSubscription(ctx.runtime.database.handle.db, ctx.session.adminId, input, vapid(ctx).keyId))),
  /** By id (the list's remove button) or by endpoint (this browser unsubscribing itself). */
  unsubscribe: roleProcedure(ROLES.deciders)
    .input(z.union([z.strictObject({ id: z.uuid() }), z.strictObject({ endpoint: z.string().min(1).max(2048) })]))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        await removeSubscription(ctx.runtime.database.handle.db, ctx.session.adminId, input);
        return { removed: true };
      }),
    ),
});
