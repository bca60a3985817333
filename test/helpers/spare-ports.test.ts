import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './processes.js';

/** The first port the kernel hands to outgoing connections (and to listen(0)). */
const EPHEMERAL_FROM = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

const poolId = process.env.VITEST_POOL_ID;
afterEach(() => {
  process.env.VITEST_POOL_ID = poolId;
});

const draw = async (count: number, ...args: Parameters<typeof freePort>) => {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort(...args));
  return ports;
};

describe('spare ports for the servers a test starts', () => {
  it('come from below the ephemeral range, where no outgoing connection takes one, and never twice', async () => {
    const ports = await draw(50);
    expect(Math.max(...ports)).toBeLessThan(EPHEMERAL_FROM);
    expect(new Set(ports).size).toBe(ports.length);
  });

  // Ranges of their own below, where no other test file draws.
  it('come from a slice of their own for each test file running at once', async () => {
    const range = { from: 9_000, to: 9_800 };
    process.env.VITEST_POOL_ID = '1';
    const first = await draw(30, range);
    process.env.VITEST_POOL_ID = '2';
    const second = await draw(30, range);
    expect(Math.max(...first)).toBeLessThan(Math.min(...second));
  });

  it('skip a port a server already listens on, and the ports it names beside it (a cluster node and its bus)', async () => {
    process.env.VITEST_POOL_ID = '3';
    const range = { from: 9_800, to: 9_816 }; // two ports per slice of eight
    const taken = createServer();
    const slice = await freePort(range);
    const other = slice % 2 === 0 ? slice + 1 : slice - 1;
    await new Promise<void>((resolve) => taken.listen(other + 100, '127.0.0.1', resolve));
    try {
      // Of the slice's two ports, `slice` was handed out above and `other`'s companion is taken: none is left.
      await expect(freePort(range, (port) => [port + 100])).rejects.toThrow(/no free port left between/);
    } finally {
      taken.close();
    }
  });
});
