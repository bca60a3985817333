import { Redis } from 'ioredis';

/** Commands that are the count's own or the replication's heartbeat, not the load's. */
const NOT_THE_LOAD = new Set(['info', 'config|resetstat', 'replconf']);

/**
 * What Redis did for a load, counted rather than timed (counts move less with a busy host than CPU time does): BullMQ
 * scripts (EVALSHA) and commands per order, summed over the masters at `urls` (a replica replays what its master
 * wrote, so counting it too would count a write twice). From INFO commandstats, whose figures include the commands a
 * script ran: the call resets them, `perOrder` reads them, `close` lets go of the connections.
 */
export async function countRedisWork(urls: string[]) {
  const clients = urls.map((url) => new Redis(url, { retryStrategy: () => null, maxRetriesPerRequest: 0 }));
  for (const client of clients) client.on('error', () => {}); // a failed command rejects, and the bench reports it
  const close = () => clients.forEach((client) => client.disconnect());
  try {
    const roles = await Promise.all(clients.map(async (client) => /^role:master/m.test(await client.info('replication'))));
    const masters = clients.filter((_, i) => roles[i]);
    await Promise.all(masters.map((client) => client.config('RESETSTAT')));
    const perOrder = async (orders: number): Promise<string> => {
      let scripts = 0;
      let commands = 0;
      for (const client of masters) {
        for (const [, name, calls] of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
          if (name === 'evalsha') scripts += Number(calls);
          if (!NOT_THE_LOAD.has(name!)) commands += Number(calls);
        }
      }
      if (orders === 0) return 'redis per order: no order placed';
      return `redis per order: ${(scripts / orders).toFixed(2)} scripts, ${(commands / orders).toFixed(1)} commands with those the scripts ran`;
    };
    return { perOrder, close };
  } catch (error) {
    close();
    throw error;
  }
}
