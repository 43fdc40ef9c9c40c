/**
 * The guest's witness round against a small in-process hub (loopback HTTP):
 * it cosigns the newest checkpoint, leaves an idle log alone (no second
 * submission, so nothing the hub could append), resubmits a cosignature the
 * hub did not get, and refuses a log that shrank.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeBase64 } from "../../server/trust/ledger/base64";
import { signCheckpoint } from "../../server/trust/ledger/checkpoint";
import { hashLeaf } from "../../server/trust/ledger/hash";
import { generateSignerKey } from "../../server/trust/ledger/note";
import { consistencyProof } from "../../server/trust/ledger/proof";
import { EMPTY_FRONTIER, MemoryNodeStore, extendTree, type Frontier } from "../../server/trust/ledger/tree";
import { addCosignature, generateCosignerKey, verifyCosignature } from "../../server/trust/ledger/witness";
import { Witness } from "./witness";

const ORIGIN = "hub.test/leasehold/abc";
const log = generateSignerKey(ORIGIN);
const witnessKey = generateCosignerKey("hub.test/leasehold-guest/w1");

/** Just enough of the hub's public ledger routes. */
class FakeHub {
  store = new MemoryNodeStore();
  frontier: Frontier = EMPTY_FRONTIER;
  notes = new Map<number, string>();
  cosignatures = new Map<number, string[]>();
  posts = 0;
  refuseNextPost = false;
  served: number | null = null;
  server = http.createServer((req, res) => void this.handle(req, res));

  append(n: number): void {
    const result = extendTree(this.frontier, Array.from({ length: n }, (_, i) => hashLeaf(Buffer.from(`entry ${this.frontier.size + i}`))));
    this.store.put(result.newNodes);
    this.frontier = result.frontier;
    this.notes.set(result.size, signCheckpoint({ origin: ORIGIN, size: result.size, root: result.root, extensions: [] }, log.signer));
  }

  newest(): number {
    return this.served ?? Math.max(...this.notes.keys());
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/api/ledger/checkpoint") {
      const size = this.newest();
      const note = (this.cosignatures.get(size) ?? []).reduce((n, line) => addCosignature(n, line), this.notes.get(size)!);
      res.end(note);
    } else if (url.pathname === "/api/ledger/proof/consistency") {
      const from = Number(url.searchParams.get("from"));
      const to = Number(url.searchParams.get("to"));
      const proof = await consistencyProof(from, to, this.store);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ from_size: from, to_size: to, proof: proof.map(encodeBase64), checkpoint: this.notes.get(to) }));
    } else if (url.pathname === "/api/ledger/cosignature" && req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      this.posts += 1;
      if (this.refuseNextPost) {
        this.refuseNextPost = false;
        res.statusCode = 503;
        res.end("{}");
        return;
      }
      const { size, line } = JSON.parse(body) as { size: number; line: string };
      const note = this.notes.get(size)!;
      expect(verifyCosignature(note.slice(0, note.lastIndexOf("\n\n") + 1), line, witnessKey.verifier).ok).toBe(true);
      this.cosignatures.set(size, [...(this.cosignatures.get(size) ?? []), line]);
      res.end("{}");
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  }
}

describe("the guest's witness round", () => {
  // A fresh hub and state directory for every case, so each passes alone and in any order.
  let hub: FakeHub;
  let url: string;
  let dir: string;
  beforeEach(async () => {
    hub = new FakeHub();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-witness-"));
    await new Promise<void>((resolve) => hub.server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(hub.server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await new Promise((resolve) => hub.server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("cosigns the newest checkpoint once, then leaves an idle log alone", async () => {
    const witness = new Witness(dir, url, log.verifier, witnessKey.signer);
    hub.append(5);
    expect(await witness.step()).toEqual({ kind: "cosigned", size: 5 });
    expect(hub.cosignatures.get(5)).toHaveLength(1);
    for (let i = 0; i < 3; i++) expect(await witness.step()).toEqual({ kind: "unchanged", size: 5 });
    expect(hub.posts).toBe(1);
    hub.append(3);
    expect(await witness.step()).toEqual({ kind: "cosigned", size: 8 });
    expect(JSON.parse(fs.readFileSync(path.join(dir, "witness.json"), "utf8"))).toMatchObject({ origin: ORIGIN, size: 8 });
  });

  it("resubmits a cosignature the hub did not get (the newest checkpoint must end up cosigned)", async () => {
    const witness = new Witness(dir, url, log.verifier, witnessKey.signer);
    hub.append(8);
    expect(await witness.step()).toEqual({ kind: "cosigned", size: 8 });
    hub.append(2);
    hub.refuseNextPost = true;
    expect(await witness.step()).toMatchObject({ kind: "unreachable" });
    expect(hub.cosignatures.get(10)).toBeUndefined();
    // Its state already says 10; the checkpoint at 10 still lacks its line, so it cosigns again.
    expect(await witness.step()).toEqual({ kind: "cosigned", size: 10 });
    expect(hub.cosignatures.get(10)).toHaveLength(1);
    expect(await witness.step()).toEqual({ kind: "unchanged", size: 10 });
  });

  it("refuses a hub whose newest checkpoint is smaller than the one it cosigned", async () => {
    const witness = new Witness(dir, url, log.verifier, witnessKey.signer);
    hub.append(8);
    hub.append(2);
    expect(await witness.step()).toEqual({ kind: "cosigned", size: 10 });
    hub.served = 8;
    const step = await witness.step();
    expect(step).toMatchObject({ kind: "failed", reason: expect.stringMatching(/^smaller_size: checkpoint size 8 is smaller than the 10 already cosigned/) });
  });
});
