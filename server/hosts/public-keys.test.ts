import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hostPublicKey } from "./public-keys";

const pem = (): string => generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString();

describe("host public keys, parsed once per PEM", () => {
  it("the same PEM gives the same key object; another PEM (a host enrolled again) gives its own", () => {
    const first = pem();
    const second = pem();
    expect(hostPublicKey(first)).toBe(hostPublicKey(first));
    expect(hostPublicKey(second)).not.toBe(hostPublicKey(first));
    expect(hostPublicKey(second).export({ type: "spki", format: "pem" }).toString()).toBe(second);
  });

  it("a PEM that does not parse throws every time (nothing is kept for it)", () => {
    expect(() => hostPublicKey("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")).toThrow();
    expect(() => hostPublicKey("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")).toThrow();
  });

  it("holds at most 1024 keys, dropping the least recently used", () => {
    const oldest = pem();
    const kept = hostPublicKey(oldest);
    const recent = pem();
    const recentKey = hostPublicKey(recent);
    for (let i = 0; i < 1023; i += 1) {
      if (i === 500) hostPublicKey(recent); // used again: stays
      hostPublicKey(pem());
    }
    expect(hostPublicKey(recent)).toBe(recentKey);
    expect(hostPublicKey(oldest)).not.toBe(kept); // dropped, parsed again
  });
});
