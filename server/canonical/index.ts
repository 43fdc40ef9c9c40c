export {
  JcsError,
  canonicalBytes,
  canonicalDigest,
  canonicalize,
  parseCanonical,
  sha256,
  sha256Digest,
  sha256Hex,
  tryCanonicalize,
} from "./jcs";
export type { CanonicalResult } from "./jcs";
