// The hub's name for RFC 8785 canonical JSON; the one implementation is
// server/trust/jcs.ts (the guest signs and verifies the same bytes).
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
} from "../trust";
export type { CanonicalResult } from "../trust";
