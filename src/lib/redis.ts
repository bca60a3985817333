import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export type HostPort = { host: string; port: number };

/**
 * Where Redis is (DESIGN C21): one server (`REDIS_URL`), a master found through Sentinel (`REDIS_SENTINELS`,
 * `REDIS_SENTINEL_NAME`), or a Cluster (`REDIS_CLUSTER_NODES`). `password` is the data nodes' password where
 * the address cannot carry it (a URL carries its own).
 */
export type RedisTarget =
  | { kind: 'server'; url: string }
  | { kind: 'sentinel'; sentinels: HostPort[]; name: string; sentinelPassword?: string; password?: string }
  | { kind: 'cluster'; nodes: HostPort[]; password?: string };

/** A client of any of the three: ioredis' own Redis (server, Sentinel) or Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * What a connection is for decides how it behaves while Redis is away:
 * - `commands`: rate limits, cache invalidations, /ready; commands wait for the reconnection.
 * - `producer`: adding jobs; fails fast (the order is committed already; the reconciler enqueues it later).
 * - `subscriber`: cache invalidations received.
 * - `blocking`: a BullMQ worker (its blocking commands need `maxRetriesPerRequest: null`).
 * - `probe`: one attempt, no reconnection (start-up checks).
 */
export type RedisRole = 'commands' | 'producer' | 'subscriber' | 'blocking' | 'probe';

const ROLE_OPTIONS: Record<RedisRole, RedisOptions> = {
  commands: { enableOfflineQueue: true },
  producer: { maxRetriesPerRequest: 1, enableOfflineQueue: false },
  subscriber: {},
  blocking: { maxRetriesPerRequest: null },
  probe: { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null },
};

/** The variable that configures `target`, for the one line of a failed start. */
export const targetVariable = (target: RedisTarget): string =>
  target.kind === 'server' ? 'REDIS_URL' : target.kind === 'sentinel' ? 'REDIS_SENTINELS' : 'REDIS_CLUSTER_NODES';

export const formatHostPorts = (list: HostPort[]) => list.map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)).join(',');

/** Where `target` points, as a start-up line names it (never a password). */
export function describeTarget(target: RedisTarget): string {
  if (target.kind === 'sentinel') return `the master "${target.name}" through the sentinels ${formatHostPorts(target.sentinels)}`;
  if (target.kind === 'cluster') return `the cluster of ${formatHostPorts(target.nodes)}`;
  const url = new URL(target.url);
  return `${url.hostname}:${url.port || 6379}`;
}

/** Redis Cluster's rule: the key's slot is that of the text between its first `{` and the next `}`, if not empty. */
export function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  return open >= 0 && key.indexOf('}', open + 1) > open + 1;
}

/** Parses `host:port,host:port` (`[v6]:port` too); null when any entry is not one. */
export function parseHostPorts(value: string): HostPort[] | null {
  const entries = value.split(',').map((entry) => entry.trim());
  const parsed = entries.map((entry) => {
    const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) return null;
    return { host: (match[1] ?? match[2])!, port };
  });
  return parsed.length > 0 && parsed.every((p) => p !== null) ? (parsed as HostPort[]) : null;
}

/**
 * A failover turns the old master into a replica without closing its connections: its writes then fail with
 * READONLY. Reconnecting asks the sentinels for the new master, and the command is sent again there.
 */
const reconnectOnReadOnly = (err: Error) => (err.message.startsWith('READONLY') ? 2 : false);

/** One way to reach Redis for every use: the client for `target`, behaving as `role` needs. */
export function connectRedis(target: RedisTarget, role: RedisRole): RedisClient {
  const options = ROLE_OPTIONS[role];
  if (target.kind === 'server') return new Redis(target.url, options);
  if (target.kind === 'sentinel') {
    return new Redis({
      ...options,
      sentinels: target.sentinels,
      name: target.name,
      sentinelPassword: target.sentinelPassword,
      password: target.password,
      reconnectOnError: reconnectOnReadOnly,
      // Learns of a failover from the sentinels at once, instead of at the next failed command.
      failoverDetector: true,
      ...(role === 'probe' ? { sentinelRetryStrategy: () => null } : {}),
    });
  }
  const { enableOfflineQueue, lazyConnect, retryStrategy: _perNode, ...nodeOptions } = options;
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...nodeOptions, password: target.password },
    enableOfflineQueue: enableOfflineQueue ?? true,
    lazyConnect: lazyConnect ?? false,
    // A master that died is replaced by its replica within the cluster's node timeout: commands wait for
    // that (16 redirections × 300 ms) rather than failing at the first closed connection.
    retryDelayOnFailover: 300,
    // Invalidations use sharded pub/sub here (see publishTo): one subscriber connection per shard, at the master
    // that owns the channel's slot.
    ...(role === 'subscriber' ? { shardedSubscribers: true } : {}),
    ...(role === 'probe' ? { clusterRetryStrategy: () => null } : {}),
  };
  return new Cluster(target.nodes, clusterOptions);
}

/**
 * Pub/sub that delivers before the publisher hears back, on every topology. On a cluster, a classic PUBLISH reaches
 * subscribers on other nodes later, over the cluster bus; a sharded one (SPUBLISH, Redis 7) goes to the master of
 * the channel's slot, which serves its subscribers first, as a single server does. Channels carry the prefix's
 * hash tag, so all of a store's channels share the queues' slot.
 */
export const pubSub = {
  subscribe: (client: RedisClient, channel: string) => (client.isCluster ? client.ssubscribe(channel) : client.subscribe(channel)),
  publish: (client: RedisClient, channel: string, message: string) =>
    client.isCluster ? client.spublish(channel, message) : client.publish(channel, message),
  onMessage: (client: RedisClient, listener: (channel: string) => void) => client.on(client.isCluster ? 'smessage' : 'message', listener),
};

/**
 * Proves that writes work where `prefix`'s keys live: a read-only replica answers READONLY, a sentinel knows
 * no SET, and on a cluster the key's hash tag puts it in the queues' own slot.
 */
export async function writeProbe(client: RedisClient, prefix: string): Promise<void> {
  await client.set(`${prefix}:write-probe`, String(Date.now()), 'PX', 60_000);
}

/**
 * What a start says of a server that refuses INFO (renamed, or an ACL without it): the client's ready check and the
 * queues (which read the server's version) both need it. Null for any other error.
 */
export function infoRefused(err: unknown): string | null {
  const message = err instanceof Error ? err.message : String(err);
  return /unknown command .?info|NOPERM.*\binfo\b/i.test(message) ? `refuses INFO (${message.trim()}), which the queues need: allow it for this user` : null;
}

/**
 * Why the server behind a `REDIS_URL` cannot serve the store, or null: a sentinel, a cluster node, or a
 * replica each need another setting, and a server that refuses INFO (renamed, or an ACL without it) cannot run the
 * queues, which read the server's version with it.
 */
export async function misplacedServer(client: Redis): Promise<string | null> {
  let server: string;
  let replication: string;
  try {
    [server, replication] = [await client.info('server'), await client.info('replication')];
  } catch (err) {
    const refused = infoRefused(err);
    if (refused) return refused;
    throw err;
  }
  const mode = /redis_mode:(\w+)/.exec(server)?.[1];
  if (mode === 'sentinel') return 'is a Redis Sentinel, not a Redis server: set REDIS_SENTINELS and REDIS_SENTINEL_NAME instead';
  if (mode === 'cluster') return 'is a Redis Cluster node: set REDIS_CLUSTER_NODES instead';
  const role = /role:(\w+)/.exec(replication)?.[1];
  if (role === 'slave') return 'is a read-only replica: point REDIS_URL at the master, or use REDIS_SENTINELS';
  return null;
}
