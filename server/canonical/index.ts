// The hub's name for RFC 8785 canonical JSON; the one implementation is
// server/trust/jcs.ts (the guest signs and verifies the same bytes). Imported from the
// file, not the trust index, so the browser verifier does not pull in job signing.
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
} from "../trust/jcs";
export type { CanonicalResult } from "../trust/jcs";
