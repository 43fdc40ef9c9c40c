/**
 * A software WebAuthn authenticator for tests (never imported by the hub):
 * one ES256 (P-256) key per credential, "none" attestation, user present and
 * verified, a signature counter. It produces exactly what
 * @simplewebauthn/browser's startRegistration()/startAuthentication() return.
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { sha256, toBase64Url } from "./challenge";

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function u32(n: number): Uint8Array {
  return new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

/** ECDSA raw r‖s (WebCrypto) → ASN.1 DER (what WebAuthn ES256 signatures are). */
function derSignature(raw: Uint8Array): Uint8Array {
  const int = (bytes: Uint8Array): Uint8Array => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i += 1;
    let v: Uint8Array = bytes.slice(i);
    if (v[0]! & 0x80) v = concat(new Uint8Array([0]), v);
    return concat(new Uint8Array([0x02, v.length]), v);
  };
  const body = concat(int(raw.slice(0, 32)), int(raw.slice(32)));
  return concat(new Uint8Array([0x30, body.length]), body);
}

export class SoftAuthenticator {
  private counter = 0;
  readonly credentialId = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  private keys?: CryptoKeyPair;
  private userHandle?: string;

  private async keyPair(): Promise<CryptoKeyPair> {
    this.keys ??= (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    return this.keys;
  }

  async register(options: PublicKeyCredentialCreationOptionsJSON, origin: string): Promise<RegistrationResponseJSON> {
    const keys = await this.keyPair();
    const jwk = await crypto.subtle.exportKey("jwk", keys.publicKey);
    const b64 = (s: string) => new Uint8Array(Buffer.from(s, "base64url"));
    const cose = isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, b64(jwk.x!)], [-3, b64(jwk.y!)]]));
    const credId = b64(this.credentialId);
    const authData = concat(
      await sha256(new TextEncoder().encode(options.rp.id!)),
      new Uint8Array([0x45]), // UP | UV | AT
      u32(this.counter),
      new Uint8Array(16),
      new Uint8Array([credId.length >> 8, credId.length & 255]),
      credId,
      cose,
    );
    this.userHandle = options.user.id;
    const clientDataJSON = new TextEncoder().encode(JSON.stringify({ type: "webauthn.create", challenge: options.challenge, origin, crossOrigin: false }));
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([["fmt", "none"], ["attStmt", new Map()], ["authData", authData]]) as never);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: { clientDataJSON: toBase64Url(clientDataJSON), attestationObject: toBase64Url(attestationObject), transports: ["internal"] },
      clientExtensionResults: {},
    };
  }

  /** An assertion over `options.challenge` (or a challenge given outright) at `origin`. */
  async assert(options: Pick<PublicKeyCredentialRequestOptionsJSON, "challenge" | "rpId">, origin: string, override: { userVerified?: boolean } = {}): Promise<AuthenticationResponseJSON> {
    const keys = await this.keyPair();
    this.counter += 1;
    const flags = override.userVerified === false ? 0x01 : 0x05;
    const authData = concat(await sha256(new TextEncoder().encode(options.rpId ?? new URL(origin).hostname)), new Uint8Array([flags]), u32(this.counter));
    const clientDataJSON = new TextEncoder().encode(JSON.stringify({ type: "webauthn.get", challenge: options.challenge, origin, crossOrigin: false }));
    const signed = concat(authData, await sha256(clientDataJSON));
    const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, signed as Uint8Array<ArrayBuffer>));
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: {
        clientDataJSON: toBase64Url(clientDataJSON),
        authenticatorData: toBase64Url(authData),
        signature: toBase64Url(derSignature(raw)),
        ...(this.userHandle === undefined ? {} : { userHandle: this.userHandle }),
      },
      clientExtensionResults: {},
    };
  }
}
