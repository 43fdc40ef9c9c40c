/**
 * Strict standard base64 (RFC 4648 §4). Node's decoder skips invalid
 * characters, accepts the URL-safe alphabet and ignores non-zero padding
 * bits, so one value has many spellings; signed formats must have exactly
 * one, or a flipped character could go unnoticed. Re-encoding always yields
 * the canonical spelling, so a string is accepted only if it comes back
 * unchanged — that one comparison rules out every lenient case at once.
 */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64") !== text) return undefined;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
