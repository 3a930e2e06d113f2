// The client address that per-address limits count (CF-Connecting-IP): an IPv4 address as
// it is, an IPv6 one by its /64, which is what one customer or LAN gets and holds all of
// (RFC 6177), so its 2^64 addresses are one bucket, not 2^64 fresh ones.

/** `2001:db8:1:2::/64` for any address in that /64; an IPv4 one (also IPv4-mapped) as it is. */
export function addressBucket(address: string): string {
  if (!address.includes(":")) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return mapped;
  const [head = "", tail] = address.toLowerCase().split("%")[0]?.split("::") ?? [];
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  const prefix = groups.slice(0, 4).map((g) => (Number.parseInt(g, 16) || 0).toString(16));
  return `${prefix.join(":")}::/64`;
}
