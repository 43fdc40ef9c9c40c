import { describe, expect, it } from "vitest";
import { publicUrlNote } from "./host";

describe("host enrol-code's note on the public URL", () => {
  it("warns when the printed command cannot work from another machine as is", () => {
    expect(publicUrlNote("http://127.0.0.1:8700")).toMatch(/only from this machine.*LEASEHOLD_PUBLIC_URL/);
    expect(publicUrlNote("http://[::1]:8700")).toMatch(/only from this machine/);
    expect(publicUrlNote("http://hub.example:8700")).toMatch(/plain HTTP.*--insecure-http/);
    expect(publicUrlNote("https://hub.example")).toBeNull();
  });
});
