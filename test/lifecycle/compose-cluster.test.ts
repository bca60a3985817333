/**
 * compose.cluster.yaml (README, "Production topology") cannot run here (no Docker engine), so what can be checked
 * without one is: HAProxy accepts its configuration, every process's settings load as a valid configuration with
 * the C21 settings for a pooler, a Sentinel set and a load balancer, and the drain delay outlasts the balancer's checks.
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/core/env.js';
import { ROOT } from '../helpers/processes.js';
import { command } from '../helpers/system.js';

type Service = { environment?: Record<string, string>; volumes?: string[]; command?: string[] };
const compose = async () =>
  parse(await readFile(join(ROOT, 'compose.cluster.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };

describe('compose.cluster.yaml', () => {
  it('HAProxy accepts its configuration', async () => {
    const stdout = await command('haproxy', ['-c', '-f', join(ROOT, 'deploy/cluster/haproxy.cfg')]);
    expect(stdout).toMatch(/Configuration file is valid/);
  });

  it('every file it mounts is in the repository', async () => {
    const mounts = Object.values((await compose()).services)
      .flatMap((s) => s.volumes ?? [])
      .filter((v) => v.startsWith('./'))
      .map((v) => v.split(':')[0]!);
    expect(mounts.length).toBeGreaterThan(0);
    for (const mount of mounts) await expect(access(join(ROOT, mount))).resolves.toBeUndefined();
  });

  it('the API and worker replicas start with the C21 settings: through the pooler, from the sentinels, behind the balancer', async () => {
    const { services } = await compose();
    for (const name of ['api', 'worker']) {
      const environment = Object.fromEntries(
        Object.entries(services[name]!.environment!).map(([k, v]) => [k, v.replace(/^\$\{ADMIN_TOKEN:\?.*\}$/, 'an-admin-token-of-enough-length')]),
      );
      const config = loadConfig(environment);
      expect(config.DATABASE_PREPARED_STATEMENTS).toBe(false);
      expect(new URL(config.DATABASE_URL).port).toBe('6432');
      expect(new URL(config.DATABASE_MIGRATION_URL!).port).toBe('5432');
      expect(config.redis.kind).toBe('sentinel');
    }
    const api = loadConfig({ ...services.api!.environment, ADMIN_TOKEN: 'an-admin-token-of-enough-length' });
    expect(api.RUN_WORKERS).toBe(false);
    expect(api.TRUST_PROXY).toBe(true);
    // HAProxy takes a replica out after `fall` failed checks `inter` apart: /ready fails at least that long first.
    const haproxy = await readFile(join(ROOT, 'deploy/cluster/haproxy.cfg'), 'utf8');
    const [, inter, fall] = /inter (\d+)s fall (\d+)/.exec(haproxy)!;
    expect(api.SHUTDOWN_DRAIN_DELAY_MS).toBeGreaterThan(Number(inter) * 1000 * Number(fall));
  });
});
