// Two concurrent leases on one workspace cannot meet through a socket or
// FIFO file in it (Landlock refuses MAKE_SOCK/MAKE_FIFO under /work).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

const here = dirname(fileURLToPath(import.meta.url));
const script = readFileSync(join(here, "workloads", "unix_rendezvous.py"), "utf8");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let wd = "";
beforeAll(() => { setupNative(); wd = makeWorkdir(); });
afterAll(() => removeWorkdir(wd));
const py = (...args: string[]) => ({ ...basePolicy(wd), argv: ["/usr/bin/python3", "-c", script, ...args], timeout_ms: 30_000 });

describe("leases do not rendezvous through the workspace", () => {
  it("hostile: a lease cannot bind a unix socket in /work (EACCES), so a concurrent lease has nothing to connect to", async () => {
    let done = false;
    const server = launch(py("serve", "/work/sock")).finally(() => { done = true; });
    for (let i = 0; i < 400 && !existsSync(join(wd, "sock")) && !done; i++) await sleep(25);
    let client = null;
    if (existsSync(join(wd, "sock"))) client = await launch(py("connect", "/work/sock"));
    const s = await server;
    expect({ server: s.stdout.toString(), client: client?.stdout.toString() ?? null }).toEqual({ server: "BIND EACCES\n", client: null });
    expect(readdirSync(wd)).toEqual([]);
  }, 60_000);
  it("hostile: a lease cannot make a FIFO in /work (EACCES)", async () => {
    const r = await launch(py("fifo", "/work/fifo"));
    expect(r.stdout.toString()).toBe("MKFIFO EACCES\n");
    expect(readdirSync(wd)).toEqual([]);
  });
  it("a unix socket in the lease's own /tmp still works", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/usr/bin/python3", "-c", "import socket; s = socket.socket(socket.AF_UNIX); s.bind('/tmp/s'); s.listen(); print('OK')"] });
    expect(r.stdout.toString()).toBe("OK\n");
  });
});
