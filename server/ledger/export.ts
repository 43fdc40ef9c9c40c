import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { approvals, grants, passkeyCredentials } from "../db/schema";
import { exportLines, writeLinesToFile, type ExportAssertion, type ExportCheckpoint, type ExportEntry, type ExportGrantAssertion, type ExportPasskey } from "./export-format";
import type { LogKey } from "./log-key";
import { toBytes } from "./node-store";

const PAGE = 5000;

/**
 * Streams the integrated log out of the database: entries by leaf index with
 * the leaf hash from the node store (not recomputed — the verifier compares
 * the two), and every checkpoint with its cosignatures. Reads in pages so
 * memory stays flat; entries still waiting for integration are not part of
 * any checkpoint yet and are left out.
 */
export async function exportLedgerToFile(db: Database, key: Pick<LogKey, "origin" | "verifier">, outPath: string): Promise<{ entries: number; checkpoints: number }> {
  const stream = await ledgerExportStream(db, key);
  await writeLinesToFile(outPath, stream.lines);
  return stream.counts();
}

/**
 * The export as text chunks of whole lines (what exportLedgerToFile writes
 * and the browser's audit explorer downloads), with the number of entries it
 * will hold known before the first line: the newest checkpoint's size.
 */
export async function ledgerExportStream(
  db: Database,
  key: Pick<LogKey, "origin" | "verifier">,
): Promise<{ entryCount: number; lines: AsyncGenerator<string>; counts(): { entries: number; checkpoints: number } }> {
  let entries = 0;
  let checkpoints = 0;
  // A consistent cut: the newest checkpoint at the start bounds everything,
  // so batches integrated while the export runs cannot leave uncovered entries.
  const [head] = await executeRows<{ size: string | number | null }>(db, sql`select max(tree_size) as size from ledger_checkpoints`);
  const limit = BigInt(String(head?.size ?? 0));
  // Two range scans per page (entries by leaf index, level-0 nodes by
  // index) zipped here: much cheaper than a per-row join lookup.
  const readPage = async (start: bigint): Promise<ExportEntry[]> => {
    const end = start + BigInt(PAGE) < limit ? start + BigInt(PAGE) : limit;
    const [rows, nodes] = await Promise.all([
      executeRows<{ leaf_index: string | number; body: Uint8Array }>(
        db,
        sql`select leaf_index, body from ledger_entries where leaf_index >= ${start} and leaf_index < ${end} order by leaf_index`,
      ),
      executeRows<{ idx: string | number; hash: Uint8Array }>(
        db,
        sql`select idx, hash from ledger_nodes where level = 0 and idx >= ${start} and idx < ${end}`,
      ),
    ]);
    const leafHashes = new Map(nodes.map((n) => [Number(n.idx), toBytes(n.hash)]));
    // A missing node row exports as an all-zero hash so the verifier names the index.
    return rows.map((row) => {
      const index = Number(row.leaf_index);
      return { index, bytes: toBytes(row.body), leafHash: leafHashes.get(index) ?? new Uint8Array(32) };
    });
  };
  async function* entryPages(): AsyncGenerator<ExportEntry[]> {
    // The next page is read while this one is encoded and written: the database and the writer overlap.
    const prefetch = (start: bigint): Promise<ExportEntry[]> => {
      const p = readPage(start);
      // Observed now: if the writer fails first, this page is never awaited and must not become an unhandled rejection.
      p.catch(() => undefined);
      return p;
    };
    let next = limit > 0n ? prefetch(0n) : undefined;
    for (let start = 0n; next !== undefined; start += BigInt(PAGE)) {
      const page = await next;
      next = start + BigInt(PAGE) < limit ? prefetch(start + BigInt(PAGE)) : undefined;
      entries += page.length;
      yield page;
    }
  }
  async function* checkpointRows(): AsyncGenerator<ExportCheckpoint> {
    let next = 0n;
    for (;;) {
      const rows = await executeRows<{ tree_size: string | number; note: string }>(
        db,
        sql`select tree_size, note from ledger_checkpoints where tree_size >= ${next} and tree_size <= ${limit} order by tree_size limit ${PAGE}`,
      );
      const sizes = rows.map((r) => BigInt(String(r.tree_size)));
      const cosigs =
        sizes.length === 0
          ? []
          : await executeRows<{ tree_size: string | number; verifier_key: string; signature_line: string }>(
              db,
              sql`select c.tree_size, w.verifier_key, c.signature_line from ledger_cosignatures c
                  join ledger_witnesses w on w.key_id = c.witness_key_id
                  where c.tree_size >= ${sizes[0]!} and c.tree_size <= ${sizes[sizes.length - 1]!} order by c.id`,
            );
      const bySize = new Map<string, { witnessKey: string; line: string }[]>();
      for (const c of cosigs) {
        const list = bySize.get(String(c.tree_size)) ?? [];
        list.push({ witnessKey: c.verifier_key, line: c.signature_line });
        bySize.set(String(c.tree_size), list);
      }
      for (const row of rows) {
        checkpoints += 1;
        yield { note: row.note, cosignatures: bySize.get(String(row.tree_size)) ?? [] };
      }
      if (rows.length < PAGE) return;
      next = sizes[sizes.length - 1]! + 1n;
    }
  }
  const { passkeys, assertions, grantAssertions } = await passkeyRecords(db);
  return {
    entryCount: Number(limit),
    lines: exportLines({ origin: key.origin, logKey: key.verifier, entries: entryPages(), checkpoints: checkpointRows(), passkeys, assertions, grantAssertions }),
    counts: () => ({ entries, checkpoints }),
  };
}

/**
 * What `leasehold verify` needs to check passkey-signed approvals and grants
 * offline: every passkey ever registered (removed ones too — they signed
 * older approvals and grants), every stored approval assertion and every
 * stored grant assertion. All are bound to the log by digests sealed in
 * admin/1, approval/1 and grant/1 `created` entries; an assertion whose entry
 * is not in this export yet is carried but checks nothing.
 */
export async function passkeyRecords(db: Database): Promise<{ passkeys: ExportPasskey[]; assertions: ExportAssertion[]; grantAssertions: ExportGrantAssertion[] }> {
  const keys = await db.select({ credentialId: passkeyCredentials.credentialId, publicKey: passkeyCredentials.publicKey }).from(passkeyCredentials).orderBy(passkeyCredentials.createdAt, passkeyCredentials.id);
  const signed = await db.select({ id: approvals.id, assertion: approvals.assertion }).from(approvals).where(sql`${approvals.assertion} is not null`).orderBy(approvals.createdAt, approvals.id);
  const signedGrants = await db.select({ id: grants.id, assertion: grants.assertion }).from(grants).where(sql`${grants.assertion} is not null`).orderBy(grants.createdAt, grants.id);
  return {
    passkeys: keys,
    assertions: signed.map((row) => ({ approvalId: row.id, ...assertionFields(row.assertion) })),
    grantAssertions: signedGrants.map((row) => ({ grantId: row.id, ...assertionFields(row.assertion) })),
  };
}

/**
 * A stored assertion (jsonb) as export fields. A field that is missing or not
 * a string exports as "" rather than being dropped: the verifier then names
 * the approval or grant whose sealed digest it no longer matches.
 */
function assertionFields(stored: Record<string, string> | null): Omit<ExportAssertion, "approvalId"> {
  const a: Record<string, unknown> = stored ?? {};
  const field = (name: string): string => (typeof a[name] === "string" ? a[name] : "");
  return {
    credentialId: field("credential_id"),
    authenticatorData: field("authenticator_data"),
    clientDataJson: field("client_data_json"),
    signature: field("signature"),
    nonce: field("nonce"),
  };
}
