// The address per-address limits count (src/http/client-address.ts): IPv4 as it is, IPv6 by its /64.
import { describe, expect, it } from "vitest";
import { addressBucket } from "../src/http/client-address.ts";

describe("addressBucket", () => {
  it.each([
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:DB8:0001:0002:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["2001:db8::", "2001:db8:0:0::/64"],
    ["2001:db8::1:2:3:4:5", "2001:db8:0:1::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::ffff:192.0.2.7", "192.0.2.7"],
    ["192.0.2.7", "192.0.2.7"],
    ["", ""],
  ])("%j counts as %j", (address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });

  it("keeps /64s apart", () => {
    expect(addressBucket("2001:db8:1:2::1")).not.toBe(addressBucket("2001:db8:1:3::1"));
  });
});
