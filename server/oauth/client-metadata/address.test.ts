import { describe, expect, it } from "vitest";
import { classifyAddress } from "./address";

describe("classifyAddress", () => {
  it.each(["93.184.215.14", "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "169.253.0.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8"])(
    "allows the public unicast address %s",
    (address) => {
      expect(classifyAddress(address)).toEqual({ ok: true });
    },
  );

  it.each([
    ["0.0.0.0", "unspecified"],
    ["10.0.0.0", "private"],
    ["10.255.255.255", "private"],
    ["100.64.0.0", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["127.0.0.1", "loopback"],
    ["169.254.169.254", "link-local"],
    ["172.16.0.0", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["192.0.0.1", "IETF"],
    ["192.0.2.1", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["224.0.0.251", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["::127.0.0.1", "IPv4-compatible"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:0a00:0001", "private"],
    ["::ffff:192.168.1.1", "private"],
    ["::ffff:100.64.0.1", "carrier-grade NAT"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::ffff:255.255.255.255", "broadcast"],
    ["::ffff:0:127.0.0.1", "SIIT"],
    ["64:ff9b::a00:1", "NAT64"],
    ["64:ff9b:1::1", "NAT64"],
    ["2001::1", "Teredo"],
    ["2001:db8::1", "documentation"],
    ["2002:c0a8:101::1", "6to4"],
    ["fc00::1", "unique local"],
    ["fdff:ffff::1", "unique local"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["fec0::1", "site-local"],
    ["ff02::1", "multicast"],
    ["FE80::1", "link-local"],
  ])("refuses %s (%s)", (address, why) => {
    const verdict = classifyAddress(address);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? "" : verdict.reason).toContain(why);
  });

  it.each(["", "localhost", "127.1", "0x7f000001", "2130706433", "1.2.3.4.5", "fe80::1%eth0", "[::1]"])("refuses %j, which is not an IP address", (address) => {
    expect(classifyAddress(address)).toMatchObject({ ok: false });
  });
});
