// A minimal binary-XML encoder for manifests aapt cannot produce here: API 33
// attributes Debian's API 29 framework does not know, UTF-8 string pools (as
// aapt2 writes them), and obfuscated attribute names whose resource ids stay
// correct. Attribute names with resource ids come first in the string pool,
// as the resource map requires.

export const NS_ANDROID = "http://schemas.android.com/apk/res/android";

export interface AttrSpec {
  android?: boolean;
  name: string;
  id?: number;
  string?: string;
  type?: number;
  data?: number;
}

export interface ElementSpec {
  name: string;
  attrs?: AttrSpec[];
  children?: ElementSpec[];
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

function chunk(type: number, headerSize: number, header: Buffer, body: Buffer): Buffer {
  return Buffer.concat([u16(type), u16(headerSize), u32(8 + header.length + body.length), header, body]);
}

export function buildAxml(root: ElementSpec, opts: { utf8?: boolean } = {}): Buffer {
  const withId: string[] = [];
  const ids: number[] = [];
  const others: string[] = [];
  const visit = (el: ElementSpec): void => {
    for (const a of el.attrs ?? []) {
      if (a.id !== undefined && !withId.includes(a.name)) {
        withId.push(a.name);
        ids.push(a.id);
      }
    }
    for (const a of el.attrs ?? []) {
      if (a.id === undefined && !others.includes(a.name)) others.push(a.name);
      if (a.string !== undefined && !others.includes(a.string)) others.push(a.string);
    }
    if (!others.includes(el.name)) others.push(el.name);
    for (const c of el.children ?? []) visit(c);
  };
  visit(root);
  const strings = [...withId, ...others.filter((s) => !withId.includes(s)), "android", NS_ANDROID];
  const idx = (s: string): number => strings.indexOf(s);

  const data: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const s of strings) {
    offsets.push(at);
    let enc: Buffer;
    if (opts.utf8) {
      const bytes = Buffer.from(s, "utf8");
      enc = Buffer.concat([Buffer.from([s.length, bytes.length]), bytes, Buffer.from([0])]);
    } else {
      enc = Buffer.concat([u16(s.length), Buffer.from(s, "utf16le"), u16(0)]);
    }
    data.push(enc);
    at += enc.length;
  }
  let body = Buffer.concat([...offsets.map(u32), ...data]);
  if (body.length % 4 !== 0) body = Buffer.concat([body, Buffer.alloc(4 - (body.length % 4))]);
  const poolHeader = Buffer.concat([u32(strings.length), u32(0), u32(opts.utf8 ? 0x100 : 0), u32(28 + offsets.length * 4), u32(0)]);
  const pool = chunk(0x0001, 28, poolHeader, body);
  const resMap = chunk(0x0180, 8, Buffer.alloc(0), Buffer.concat(ids.map(u32)));
  const nsHeader = Buffer.concat([u32(1), u32(0xffffffff)]);
  const nsBody = Buffer.concat([u32(idx("android")), u32(idx(NS_ANDROID))]);

  const nodes: Buffer[] = [];
  const emit = (el: ElementSpec): void => {
    const attrs = (el.attrs ?? []).map((a) => {
      const isString = a.string !== undefined;
      return Buffer.concat([
        u32(a.android ? idx(NS_ANDROID) : 0xffffffff),
        u32(idx(a.name)),
        u32(isString ? idx(a.string!) : 0xffffffff),
        u16(8),
        Buffer.from([0, isString ? 0x03 : (a.type ?? 0x10)]),
        u32(isString ? idx(a.string!) : (a.data ?? 0)),
      ]);
    });
    const ext = Buffer.concat([u32(0xffffffff), u32(idx(el.name)), u16(20), u16(20), u16(attrs.length), u16(0), u16(0), u16(0)]);
    nodes.push(chunk(0x0102, 16, nsHeader, Buffer.concat([ext, ...attrs])));
    for (const c of el.children ?? []) emit(c);
    nodes.push(chunk(0x0103, 16, nsHeader, Buffer.concat([u32(0xffffffff), u32(idx(el.name))])));
  };
  emit(root);
  const inner = Buffer.concat([pool, resMap, chunk(0x0100, 16, nsHeader, nsBody), ...nodes, chunk(0x0101, 16, nsHeader, nsBody)]);
  return chunk(0x0003, 8, Buffer.alloc(0), inner);
}
