/**
 * Wake-ups on an embedded PGlite database stay in-process: only the process
 * holding the data directory can open it, so announce() sends no NOTIFY —
 * waiters here are woken directly, and nothing else could hear one.
 */
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import type { PGlite } from "@electric-sql/pglite";
import { describeEachDatabase } from "../../test/support/databases";
import { announce, HOSTS_CHANNEL, listenForHostWakeups } from "./notify";
import { jobTopic, sleepUntilWoken } from "./wake";

describeEachDatabase("host wake-ups", (db) => {
  it("announce wakes a waiter in this process; it sends a NOTIFY only where another process could be listening (PostgreSQL), never on PGlite", async () => {
    const handle = db().handle;
    await listenForHostWakeups(handle);
    const topic = jobTopic("00000000-0000-4000-8000-00000000000a");
    const heard: string[] = [];
    let stop: (() => Promise<void>) | undefined;
    if (handle.driver.kind === "pglite") {
      stop = await (handle.driver.client as PGlite).listen(HOSTS_CHANNEL, (payload) => heard.push(payload));
    } else {
      const listener = await handle.driver.client.listen(HOSTS_CHANNEL, (payload) => heard.push(payload));
      stop = () => listener.unlisten();
    }
    try {
      const started = Date.now();
      const waiter = sleepUntilWoken(topic, 2_000);
      await announce(handle.db, topic);
      await waiter;
      expect(Date.now() - started).toBeLessThan(1_500);
      // A round trip after the announce: a NOTIFY sent by it has been delivered by now.
      await handle.db.execute(sql`select 1`);
      await new Promise((r) => setTimeout(r, 200));
      const mine = heard.filter((p) => p.startsWith(topic));
      if (handle.kind === "pglite") expect(mine).toEqual([]);
      else expect(mine).toHaveLength(1);
    } finally {
      await stop?.();
    }
  });
});
