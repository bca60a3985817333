import { BlockList, isIP } from 'node:net';

/**
 * An account's address allow-list (C26): IPv4 and IPv6 addresses and CIDR ranges. Compiled once per checked token
 * (it travels with the token in the process cache), so a request's check is a lookup in memory, not a statement.
 */
export type AllowList = { allows(address: string): boolean };

const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** An address as a person reads it: a dual-stack socket's `::ffff:203.0.113.7` is the IPv4 address it carries. */
export const plainAddress = (address: string) => IPV4_MAPPED.exec(address)?.[1] ?? address;

/** An entry's address and prefix length, or null when it is neither an address nor a CIDR range. */
function parseEntry(entry: string): { address: string; family: 'ipv4' | 'ipv6'; prefix: number } | null {
  const [address = '', prefixText, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return null;
  const bits = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  return prefix <= bits ? { address, family: version === 4 ? 'ipv4' : 'ipv6', prefix } : null;
}

/** Whether an allow-list entry can be kept: an IPv4 or IPv6 address, or a CIDR range of one. */
export const isAllowListEntry = (entry: string) => parseEntry(entry) !== null;

/** Answers one compiled list remembers (its callers' addresses): bounded, since under TRUST_PROXY a header names them. */
const REMEMBERED_ADDRESSES = 64;

/**
 * The compiled list; null for an empty one, which allows any address. `BlockList.check` of a string builds a native
 * `SocketAddress` (two native objects for the GC) on every call: 4–6% of the API's CPU on a cached read. A list is
 * fixed once compiled, so it remembers its answer per address: an account's requests come from a few.
 */
export function compileAllowList(entries: readonly string[]): AllowList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const parsed = parseEntry(entry);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  const answers = new Map<string, boolean>();
  return {
    allows(address) {
      let allowed = answers.get(address);
      if (allowed === undefined) {
        const plain = plainAddress(address);
        const version = isIP(plain);
        allowed = version !== 0 && list.check(plain, version === 4 ? 'ipv4' : 'ipv6');
        if (answers.size >= REMEMBERED_ADDRESSES) answers.clear();
        answers.set(address, allowed);
      }
      return allowed;
    },
  };
}
