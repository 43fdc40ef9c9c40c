import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import type { NodeKey, NodeReader } from "../trust/ledger/tree";

type Queryable = Pick<Database, "execute">;

/** Reads perfect-subtree hashes from ledger_nodes, in one query per call. */
export function databaseNodeReader(db: Queryable): NodeReader {
  return {
    async getNodes(keys: readonly NodeKey[]): Promise<readonly Uint8Array[]> {
      if (keys.length === 0) return [];
      const tuples = sql.join(
        keys.map((k) => sql`(${k.level}::smallint, ${BigInt(k.index)}::bigint)`),
        sql`, `,
      );
      const rows = await executeRows<{ level: number; idx: string | number | bigint; hash: Uint8Array }>(
        db as Database,
        sql`select level, idx, hash from ledger_nodes where (level, idx) in (${tuples})`,
      );
      const found = new Map(rows.map((r) => [`${Number(r.level)}/${String(r.idx)}`, toBytes(r.hash)]));
      return keys.map((k) => {
        const hash = found.get(`${k.level}/${k.index}`);
        if (!hash) throw new Error(`ledger node (level ${k.level}, index ${k.index}) is missing from the store`);
        return hash;
      });
    },
  };
}

/** PGlite returns bytea as Uint8Array, postgres-js as Buffer; both are Uint8Array, but normalise copies. */
export function toBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === "string" && value.startsWith("\\x")) return new Uint8Array(Buffer.from(value.slice(2), "hex"));
  throw new Error("expected bytea");
}
