import { describe, expect, it } from "vitest";
import { plainHttpWarning } from "./start";

describe("leasehold start warns while the admin is plain HTTP off loopback", () => {
  it.each([["http://10.0.0.5:8700"], ["http://hub.lan:8700"], ["http://0.0.0.0:8700"], ["http://[fe80::1]:8700"]])("%s → a warning naming LEASEHOLD_PUBLIC_URL", (url) => {
    expect(plainHttpWarning(url)).toMatch(/plain HTTP at .*LEASEHOLD_PUBLIC_URL/);
  });

  it.each([["http://127.0.0.1:8700"], ["http://localhost:8700"], ["http://[::1]:8700"], ["https://hub.example.org"]])("%s → no warning", (url) => {
    expect(plainHttpWarning(url)).toBeNull();
  });
});
