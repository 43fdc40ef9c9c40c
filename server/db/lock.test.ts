import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { acquireDataDirLock } from "./lock";

describe("data directory lock", () => {
  it("refuses a second holder and names the first, then frees on release", async () => {
    const dir = `/tmp/lock-test-${randomBytes(6).toString("hex")}`;
    const first = await acquireDataDirLock(dir, "first holder");
    await expect(acquireDataDirLock(dir, "second")).rejects.toMatchObject({
      code: "DATA_DIR_LOCKED",
      message: expect.stringContaining(`pid ${process.pid}, first holder`),
    });
    await first.release();
    const again = await acquireDataDirLock(dir, "third");
    await again.release();
  });

  it("distinct directories do not contend", async () => {
    const a = await acquireDataDirLock(`/tmp/a-${randomBytes(6).toString("hex")}`, "a");
    const b = await acquireDataDirLock(`/tmp/b-${randomBytes(6).toString("hex")}`, "b");
    await a.release();
    await b.release();
  });
});
