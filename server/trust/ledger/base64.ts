import { decodeBase64Loose, encodeBase64 as encode } from "../portable/bytes";

/**
 * Strict standard base64 (RFC 4648 §4). Node's decoder skips invalid
 * characters, accepts the URL-safe alphabet and ignores non-zero padding
 * bits, so one value has many spellings; signed formats must have exactly
 * one, or a flipped character could go unnoticed. Re-encoding always yields
 * the canonical spelling, so a string is accepted only if it comes back
 * unchanged — that one comparison rules out every lenient case at once.
 * No Buffer here: this runs in the browser verifier too (../portable).
 */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  const bytes = decodeBase64Loose(text);
  if (bytes === undefined || encode(bytes) !== text) return undefined;
  return bytes;
}

export function encodeBase64(bytes: Uint8Array): string {
  return encode(bytes);
}
