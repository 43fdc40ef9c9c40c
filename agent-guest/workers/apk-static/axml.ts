// Android binary XML (AXML), the compiled form of AndroidManifest.xml: a
// string pool, a resource map (string index → attribute resource id), then
// namespace and element chunks. Attributes are resolved by resource id where
// the map gives one, because obfuscators rename the attribute strings while
// the platform itself only reads the ids. Every count and length in the file
// is bounded by `InspectLimits`; a malformed chunk stops the parse with an
// error the caller reports.

import type { InspectLimits } from "./limits";

const RES_STRING_POOL = 0x0001;
const RES_XML = 0x0003;
const RES_XML_START_NAMESPACE = 0x0100;
const RES_XML_END_NAMESPACE = 0x0101;
const RES_XML_START_ELEMENT = 0x0102;
const RES_XML_END_ELEMENT = 0x0103;
const RES_XML_CDATA = 0x0104;
const RES_XML_RESOURCE_MAP = 0x0180;
const UTF8_FLAG = 0x100;
const NO_INDEX = 0xffffffff;


/** Typed value types of Res_value that a manifest uses. */
export const TYPE_REFERENCE = 0x01;
export const TYPE_STRING = 0x03;
export const TYPE_FLOAT = 0x04;
export const TYPE_INT_DEC = 0x10;
export const TYPE_INT_HEX = 0x11;
export const TYPE_INT_BOOLEAN = 0x12;

export interface AxmlAttribute {
  namespace: string | null;
  name: string;
  /** Resource id from the resource map, when the attribute has one. */
  resourceId: number | null;
  type: number;
  data: number;
  /** The raw string, when the value was kept as a string. */
  raw: string | null;
}

export interface AxmlElement {
  name: string;
  namespace: string | null;
  attributes: AxmlAttribute[];
  children: AxmlElement[];
  line: number;
}

export class AxmlError extends Error {}

export interface AxmlDocument {
  root: AxmlElement | null;
  stringCount: number;
  elementCount: number;
}

class StringPool {
  private readonly cache = new Map<number, string>();

  constructor(
    private readonly buf: Buffer,
    private readonly offsets: number[],
    private readonly stringsStart: number,
    private readonly utf8: boolean,
    private readonly maxChars: number,
  ) {}

  get count(): number {
    return this.offsets.length;
  }

  get(index: number): string | null {
    if (index === NO_INDEX) return null;
    if (index >= this.offsets.length) throw new AxmlError(`string index ${index} outside the pool of ${this.offsets.length}`);
    const hit = this.cache.get(index);
    if (hit !== undefined) return hit;
    const s = this.decode(this.stringsStart + this.offsets[index]!);
    this.cache.set(index, s);
    return s;
  }

  private byte(at: number): number {
    if (at >= this.buf.length) throw new AxmlError("string runs past the pool");
    return this.buf[at]!;
  }

  private decode(at: number): string {
    if (this.utf8) {
      // Two lengths: UTF-16 units, then UTF-8 bytes; each 1 or 2 bytes long.
      let p = at;
      const first = this.byte(p++);
      if ((first & 0x80) !== 0) p++;
      let len = this.byte(p++);
      if ((len & 0x80) !== 0) len = ((len & 0x7f) << 8) | this.byte(p++);
      if (len > this.maxChars * 3) throw new AxmlError(`string of ${len} bytes exceeds the limit`);
      if (p + len > this.buf.length) throw new AxmlError("string runs past the pool");
      return this.buf.toString("utf8", p, p + len);
    }
    if (at + 2 > this.buf.length) throw new AxmlError("string runs past the pool");
    let len = this.buf.readUInt16LE(at);
    let p = at + 2;
    if ((len & 0x8000) !== 0) {
      if (p + 2 > this.buf.length) throw new AxmlError("string runs past the pool");
      len = ((len & 0x7fff) << 16) | this.buf.readUInt16LE(p);
      p += 2;
    }
    if (len > this.maxChars) throw new AxmlError(`string of ${len} UTF-16 units exceeds the limit of ${this.maxChars}`);
    if (p + len * 2 > this.buf.length) throw new AxmlError("string runs past the pool");
    return this.buf.toString("utf16le", p, p + len * 2);
  }
}

function parseStringPool(buf: Buffer, start: number, headerSize: number, size: number, limits: InspectLimits): StringPool {
  if (headerSize < 28) throw new AxmlError("string pool header too short");
  const count = buf.readUInt32LE(start + 8);
  const flags = buf.readUInt32LE(start + 16);
  const stringsStart = buf.readUInt32LE(start + 20);
  if (count > limits.maxStrings) throw new AxmlError(`string pool of ${count} strings exceeds the limit of ${limits.maxStrings}`);
  const offsetsAt = start + headerSize;
  if (offsetsAt + count * 4 > start + size) throw new AxmlError("string pool offsets run past the chunk");
  if (stringsStart > size) throw new AxmlError("string data starts past the chunk");
  const offsets: number[] = new Array<number>(count);
  for (let i = 0; i < count; i++) offsets[i] = buf.readUInt32LE(offsetsAt + i * 4);
  // Strings are decoded lazily and only inside this chunk's bytes.
  const chunk = buf.subarray(start, start + size);
  return new StringPool(chunk, offsets, stringsStart, (flags & UTF8_FLAG) !== 0, limits.maxStringChars);
}

export function parseAxml(buf: Buffer, limits: InspectLimits): AxmlDocument {
  if (buf.length < 8) throw new AxmlError("too short for a binary XML header");
  const type = buf.readUInt16LE(0);
  const headerSize = buf.readUInt16LE(2);
  const total = buf.readUInt32LE(4);
  if (type !== RES_XML) throw new AxmlError(`not binary XML (chunk type 0x${type.toString(16)})`);
  if (total > buf.length) throw new AxmlError(`declares ${total} bytes, has ${buf.length} (truncated)`);
  let pool: StringPool | null = null;
  let resourceMap: number[] = [];
  const namespaces: { prefix: string | null; uri: string | null }[] = [];
  const stack: AxmlElement[] = [];
  let root: AxmlElement | null = null;
  let elementCount = 0;

  let p = headerSize;
  while (p + 8 <= total) {
    const ctype = buf.readUInt16LE(p);
    const chead = buf.readUInt16LE(p + 2);
    const csize = buf.readUInt32LE(p + 4);
    if (csize < 8 || chead < 8 || chead > csize || p + csize > total) throw new AxmlError(`chunk at ${p} has an impossible size`);
    switch (ctype) {
      case RES_STRING_POOL:
        if (pool === null) pool = parseStringPool(buf, p, chead, csize, limits);
        break;
      case RES_XML_RESOURCE_MAP: {
        const n = Math.min((csize - chead) >>> 2, limits.maxStrings);
        resourceMap = new Array<number>(n);
        for (let i = 0; i < n; i++) resourceMap[i] = buf.readUInt32LE(p + chead + i * 4);
        break;
      }
      case RES_XML_START_NAMESPACE:
      case RES_XML_END_NAMESPACE: {
        const strings = need(pool);
        if (p + chead + 8 > p + csize) throw new AxmlError("namespace chunk too short");
        if (ctype === RES_XML_START_NAMESPACE) {
          if (namespaces.length >= limits.maxDepth) throw new AxmlError("too many nested namespaces");
          namespaces.push({ prefix: strings.get(buf.readUInt32LE(p + chead)), uri: strings.get(buf.readUInt32LE(p + chead + 4)) });
        } else {
          namespaces.pop();
        }
        break;
      }
      case RES_XML_START_ELEMENT: {
        const strings = need(pool);
        if (++elementCount > limits.maxElements) throw new AxmlError(`more than ${limits.maxElements} elements`);
        if (stack.length >= limits.maxDepth) throw new AxmlError(`elements nested deeper than ${limits.maxDepth}`);
        const el = parseStartElement(buf, p, chead, csize, strings, resourceMap, limits);
        el.line = buf.readUInt32LE(p + 8);
        const parent = stack[stack.length - 1];
        if (parent !== undefined) parent.children.push(el);
        else if (root === null) root = el;
        else throw new AxmlError("more than one root element");
        stack.push(el);
        break;
      }
      case RES_XML_END_ELEMENT:
        if (stack.pop() === undefined) throw new AxmlError("end element without a start");
        break;
      case RES_XML_CDATA:
        break;
      default:
        // Unknown chunk types are skipped by size, as the platform does.
        break;
    }
    p += csize;
  }
  return { root, stringCount: pool?.count ?? 0, elementCount };
}

function need(pool: StringPool | null): StringPool {
  if (pool === null) throw new AxmlError("XML chunk before the string pool");
  return pool;
}

function parseStartElement(buf: Buffer, p: number, chead: number, csize: number, strings: StringPool, resourceMap: number[], limits: InspectLimits): AxmlElement {
  const ext = p + chead;
  if (ext + 20 > p + csize) throw new AxmlError("start element chunk too short");
  const ns = strings.get(buf.readUInt32LE(ext));
  const name = strings.get(buf.readUInt32LE(ext + 4)) ?? "";
  const attrStart = buf.readUInt16LE(ext + 8);
  const attrSize = buf.readUInt16LE(ext + 10);
  const attrCount = buf.readUInt16LE(ext + 12);
  if (attrCount > limits.maxAttributes) throw new AxmlError(`element <${name}> has ${attrCount} attributes`);
  if (attrCount > 0 && attrSize < 20) throw new AxmlError("attribute records too small");
  if (ext + attrStart + attrCount * attrSize > p + csize) throw new AxmlError(`attributes of <${name}> run past the chunk`);
  const attributes: AxmlAttribute[] = [];
  for (let i = 0; i < attrCount; i++) {
    const a = ext + attrStart + i * attrSize;
    const nameIndex = buf.readUInt32LE(a + 4);
    const rawIndex = buf.readUInt32LE(a + 8);
    const type = buf.readUInt8(a + 15);
    const data = buf.readUInt32LE(a + 16);
    const rid = nameIndex < resourceMap.length ? resourceMap[nameIndex]! : null;
    attributes.push({
      namespace: strings.get(buf.readUInt32LE(a)),
      name: strings.get(nameIndex) ?? "",
      resourceId: rid === 0 ? null : rid,
      type,
      data,
      raw: type === TYPE_STRING ? strings.get(data) : strings.get(rawIndex),
    });
  }
  return { name, namespace: ns, attributes, children: [], line: 0 };
}

/** A typed attribute value as JSON: string, number, boolean, or a reference "@0x…". */
export function attributeValue(a: AxmlAttribute): string | number | boolean | null {
  switch (a.type) {
    case TYPE_STRING:
      return a.raw;
    case TYPE_INT_DEC:
    case TYPE_INT_HEX:
      return a.data | 0;
    case TYPE_INT_BOOLEAN:
      return a.data !== 0;
    case TYPE_REFERENCE:
      return `@0x${a.data.toString(16).padStart(8, "0")}`;
    case TYPE_FLOAT:
      return new DataView(new Uint32Array([a.data]).buffer).getFloat32(0, true);
    default:
      return a.raw;
  }
}
