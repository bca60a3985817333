import { Redis } from 'ioredis';

/**
 * What Redis did for a load, counted rather than timed (counts do not move with a busy host): BullMQ scripts
 * (EVALSHA) and commands per order, summed over the masters at `urls` (a replica replays what its master wrote, so
 * counting it too would count a write twice). From INFO commandstats, whose figures include the commands a script
 * ran: `start` resets them, `perOrder` reads them.
 */
export async function countRedisWork(urls: string[]) {
  const clients = urls.map((url) => new Redis(url));
  const roles = await Promise.all(clients.map(async (client) => /^role:master/m.test(await client.info('replication'))));
  const masters = clients.filter((_, i) => roles[i]);
  await Promise.all(masters.map((client) => client.config('RESETSTAT')));
  return {
    perOrder: async (orders: number): Promise<string> => {
      let scripts = 0;
      let commands = 0;
      for (const client of masters) {
        for (const [, name, calls] of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
          if (name === 'evalsha') scripts += Number(calls);
          if (!['info', 'config|resetstat'].includes(name!)) commands += Number(calls);
        }
      }
      for (const client of clients) client.disconnect();
      return `redis per order: ${(scripts / orders).toFixed(2)} scripts, ${(commands / orders).toFixed(1)} commands with those the scripts ran`;
    },
  };
}
