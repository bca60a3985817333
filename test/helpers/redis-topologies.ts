/**
 * Redis as it runs past one box, built from the installed redis-server on spare ports and directories of the
 * test's own: a Cluster of masters with a replica each, a Sentinel set watching one master and its replica, and one
 * master with its replica alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { command, freePort, until, waitForPort } from './system.js';

/** One redis-server in the foreground, so the test can kill it (SIGKILL) like a crash. */
type Node = { port: number; process: ChildProcess; kill: () => Promise<void> };

async function startNode(dir: string, port: number, args: string[]): Promise<Node> {
  const child = spawn('redis-server', [...args, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', join(dir, `${port}.log`)], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(port);
  return {
    port,
    process: child,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A short-lived client to one node, for commands the test sends itself (never through the service). */
async function onNode<T>(port: number, work: (redis: Redis) => Promise<T>, password?: string): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

const info = (port: number, section: string, password?: string) => onNode(port, (r) => r.info(section), password);
const field = (text: string, name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(text)?.[1]?.trim();

export type RedisClusterSet = {
  /** `REDIS_CLUSTER_NODES` for the service: every node's address. */
  nodes: string;
  password: string;
  /** Every node's port, masters first. */
  ports: number[];
  /** Every node's process id (the bench counts their CPU). */
  pids: () => number[];
  /** The port of the master now serving the slot of `key`. */
  masterOf: (key: string) => Promise<number>;
  /**
   * Kills a master like a crash (SIGKILL), calls `killed` the moment it is dead, and resolves once its replica has
   * taken over its slots.
   */
  killMaster: (port: number, killed?: () => void) => Promise<{ replacedBy: number }>;
  stop: () => Promise<void>;
};

/**
 * A Redis Cluster of `masters` masters, each with one replica, behind a password. `nodeTimeoutMs` is how long a
 * master may be silent before its replica takes over.
 */
export async function startRedisCluster({ masters = 3, nodeTimeoutMs = 2000 } = {}): Promise<RedisClusterSet> {
  const dir = await mkdtemp(join(tmpdir(), 'topup-redis-cluster-'));
  const password = `cluster-${Math.random().toString(36).slice(2)}`;
  const ports = await distinctPorts(masters * 2, { withClusterBus: true });
  const nodes = await Promise.all(
    ports.map((port) =>
      startNode(dir, port, [
        '--cluster-enabled', 'yes',
        '--cluster-port', String(port + CLUSTER_BUS_OFFSET),
        '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', String(nodeTimeoutMs),
        '--requirepass', password,
        '--masterauth', password,
        '--repl-diskless-sync-delay', '0',
      ]),
    ),
  );
  await command('redis-cli', ['-a', password, '--no-auth-warning', '--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes']);
  const healthy = async (port: number) => field(await info(port, 'cluster', password), 'cluster_enabled') === '1' &&
    (await onNode(port, (r) => r.call('cluster', 'info') as Promise<string>, password)).includes('cluster_state:ok');
  // A replica that never synced cannot take over: every one must be in sync before the cluster is used.
  const synced = async (port: number) => {
    const replication = await info(port, 'replication', password);
    return field(replication, 'role') === 'master' || field(replication, 'master_link_status') === 'up';
  };
  await until('every cluster node to see the cluster as ok, every replica in sync', async () =>
    (await Promise.all(ports.map(async (port) => (await healthy(port)) && (await synced(port))))).every(Boolean),
  );
  const living = () => nodes.filter((n) => n.process.exitCode === null && n.process.signalCode === null);
  const slotOwner = async (slot: number) => {
    const shards = (await onNode(living()[0]!.port, (r) => r.call('cluster', 'slots'), password)) as Array<[number, number, [string, number]]>;
    const owner = shards.find(([from, to]) => slot >= from && slot <= to);
    if (!owner) throw new Error(`no master serves slot ${slot}`);
    return owner[2][1];
  };
  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    password,
    ports,
    pids: () => living().map((n) => n.process.pid!),
    masterOf: async (key) => slotOwner((await onNode(living()[0]!.port, (r) => r.call('cluster', 'keyslot', key), password)) as number),
    killMaster: async (port, killed = () => {}) => {
      const node = nodes.find((n) => n.port === port)!;
      const slot = await firstSlotOf(port, password);
      await node.kill();
      killed();
      let replacedBy = port;
      await until(`a replica to take over from the master on ${port}`, async () => {
        replacedBy = await slotOwner(slot);
        return replacedBy !== port && (await Promise.all(living().map((n) => healthy(n.port)))).every(Boolean);
      });
      return { replacedBy };
    },
    stop: async () => {
      await Promise.all(nodes.map((n) => n.kill()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The first slot the master on `port` serves (to follow its slots through a failover). */
async function firstSlotOf(port: number, password: string): Promise<number> {
  const shards = (await onNode(port, (r) => r.call('cluster', 'slots'), password)) as Array<[number, number, [string, number]]>;
  return shards.find((s) => s[2][1] === port)![0];
}

/** A master and its replica, in sync, both behind `password`. */
async function startMasterAndReplica(dir: string, password: string, masterPort: number, replicaPort: number): Promise<Node[]> {
  const auth = ['--requirepass', password, '--masterauth', password];
  const servers: Node[] = [];
  try {
    servers.push(await startNode(dir, masterPort, [...auth, '--repl-diskless-sync-delay', '0']));
    servers.push(await startNode(dir, replicaPort, [...auth, '--replicaof', '127.0.0.1', String(masterPort)]));
    await until('the replica to be in sync', async () => field(await info(replicaPort, 'replication', password), 'master_link_status') === 'up');
    return servers;
  } catch (err) {
    // Nothing is left running by a start that failed: the caller has nothing to stop yet.
    await Promise.all(servers.map((n) => n.kill()));
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

export type RedisWithReplica = {
  /** `REDIS_URL` for the service: the master, with its password. */
  url: string;
  /** Both servers' process ids (the bench counts their CPU). */
  pids: () => number[];
  stop: () => Promise<void>;
};

/**
 * One Redis kept as production keeps one: a master with a replica that copies every write. The bench compares a
 * cluster of masters with a replica each against it, so that both sides copy the same writes.
 */
export async function startRedisWithReplica(): Promise<RedisWithReplica> {
  const dir = await mkdtemp(join(tmpdir(), 'topup-redis-replica-'));
  const password = `data-${Math.random().toString(36).slice(2)}`;
  const [masterPort, replicaPort] = await distinctPorts(2);
  const servers = await startMasterAndReplica(dir, password, masterPort!, replicaPort!);
  return {
    url: `redis://:${password}@127.0.0.1:${masterPort}`,
    pids: () => servers.map((n) => n.process.pid!),
    stop: async () => {
      await Promise.all(servers.map((n) => n.kill()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type RedisSentinelSet = {
  /** `REDIS_SENTINELS` for the service. */
  sentinels: string;
  name: string;
  password: string;
  sentinelPassword: string;
  /** The data servers' ports (the first started as the master) and the sentinels' ports. */
  ports: { servers: number[]; sentinels: number[] };
  /** The port of the master the sentinels name now. */
  master: () => Promise<number>;
  /**
   * Fails the master over as an operator does (`SENTINEL FAILOVER`): the replica is promoted and the old master,
   * still running with its connections open, becomes a replica that answers writes with READONLY.
   */
  failover: () => Promise<{ from: number; to: number }>;
  stop: () => Promise<void>;
};

/** One master with one replica and three sentinels (quorum 2), passwords on both the servers and the sentinels. */
export async function startRedisSentinels({ downAfterMs = 1000 } = {}): Promise<RedisSentinelSet> {
  const dir = await mkdtemp(join(tmpdir(), 'topup-redis-sentinel-'));
  const name = 'topup-master';
  const password = `data-${Math.random().toString(36).slice(2)}`;
  const sentinelPassword = `sentinel-${Math.random().toString(36).slice(2)}`;
  const [masterPort, replicaPort, ...sentinelPorts] = await distinctPorts(5);
  const servers = await startMasterAndReplica(dir, password, masterPort!, replicaPort!);
  const sentinels: Node[] = [];
  for (const port of sentinelPorts) {
    const config = join(dir, `sentinel-${port}.conf`);
    await writeFile(
      config,
      [
        `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
        `sentinel auth-pass ${name} ${password}`,
        `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
        `sentinel failover-timeout ${name} 10000`,
        `sentinel parallel-syncs ${name} 1`,
        `requirepass ${sentinelPassword}`,
        `sentinel sentinel-pass ${sentinelPassword}`,
        '',
      ].join('\n'),
    );
    sentinels.push(await startNode(dir, port, [config, '--sentinel']));
  }
  const askSentinel = <T>(work: (r: Redis) => Promise<T>) => onNode(sentinels[0]!.port, work, sentinelPassword);
  const master = async () => Number(((await askSentinel((r) => r.call('sentinel', 'get-master-addr-by-name', name))) as string[])[1]);
  // Every sentinel has found the others and the replica before the set is used.
  await until('the sentinels to know each other and the replica', async () => {
    const views = await Promise.all(
      sentinels.map((s) => onNode(s.port, (r) => r.call('sentinel', 'master', name) as Promise<string[]>, sentinelPassword)),
    );
    return views.every((v) => Number(v[v.indexOf('num-other-sentinels') + 1]) === 2 && Number(v[v.indexOf('num-slaves') + 1]) === 1);
  });
  return {
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    name,
    password,
    sentinelPassword,
    ports: { servers: [masterPort!, replicaPort!], sentinels: sentinelPorts },
    master,
    failover: async () => {
      const from = await master();
      await askSentinel((r) => r.call('sentinel', 'failover', name));
      let to = from;
      await until('the sentinels to name the new master, it to take writes and the old one to follow it', async () => {
        to = await master();
        return (
          to !== from &&
          field(await info(to, 'replication', password), 'role') === 'master' &&
          field(await info(from, 'replication', password), 'role') === 'slave'
        );
      });
      return { from, to };
    },
    stop: async () => {
      await Promise.all([...sentinels, ...servers].map((n) => n.kill()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Where a cluster node's bus listens: its port plus this, set with `--cluster-port`. */
const CLUSTER_BUS_OFFSET = 6000;

/**
 * `count` spare ports, none the same. A cluster node also listens on its cluster bus port, so with
 * `withClusterBus` both must be free, drawn from a range of their own that no other spare port comes from.
 */
async function distinctPorts(count: number, { withClusterBus = false } = {}): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    ports.push(
      withClusterBus
        ? await freePort({ from: 20_000, to: 20_000 + CLUSTER_BUS_OFFSET }, (port) => [port + CLUSTER_BUS_OFFSET])
        : await freePort(),
    );
  }
  return ports;
}
