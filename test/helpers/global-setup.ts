import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrateDatabase } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PostgreSQL server URL whose path names the migrated template database. */
    templateDatabaseUrl: string;
    redisUrl: string;
    /** Where test apps note the routes they declare and the routes they answered (the contract test). */
    contractDir: string;
  }
}

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

async function postgresAnswers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * Tests use DATABASE_URL / REDIS_URL when set, else the local servers, else testcontainers
 * (only where a Docker engine runs). One migrated template database is copied per test file.
 */
export default async function setup(project: TestProject) {
  const stops: Array<() => Promise<unknown>> = [];
  let serverUrl = process.env.DATABASE_URL ?? LOCAL_POSTGRES;
  if (!process.env.DATABASE_URL && !(await postgresAnswers(serverUrl))) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:15-alpine').start();
    serverUrl = container.getConnectionUri();
    stops.push(() => container.stop());
  }
  let redisUrl = process.env.REDIS_URL ?? LOCAL_REDIS;
  if (!process.env.REDIS_URL && !(await redisAnswers(redisUrl))) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    redisUrl = container.getConnectionUrl();
    stops.push(() => container.stop());
  }

  const template = `topup_template_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgres(withDatabase(serverUrl, 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${template}"`);
  await migrateDatabase(withDatabase(serverUrl, template));
  project.provide('templateDatabaseUrl', withDatabase(serverUrl, template));
  project.provide('redisUrl', redisUrl);
  const contractDir = await mkdtemp(join(tmpdir(), 'topup-contract-'));
  project.provide('contractDir', contractDir);

  return async () => {
    const coverage = await routesNotAnswered(contractDir);
    await rm(contractDir, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists "${template}" with (force)`);
    await admin.end({ timeout: 5 });
    for (const stop of stops) await stop();
    // Checked when the whole suite ran (a run of some files answers only some routes).
    if (wholeSuite() && coverage.length) {
      throw new Error(`the contract test never saw an answer from: ${coverage.join(', ')}`);
    }
  };
}

/** Declared routes that no test file got an answer from. */
async function routesNotAnswered(dir: string): Promise<string[]> {
  const lines = (await Promise.all((await readdir(dir)).map((f) => readFile(join(dir, f), 'utf8')))).join('').split('\n');
  const declared = new Set(lines.filter((l) => l.startsWith('declared ')).map((l) => l.slice('declared '.length)));
  const answered = new Set(lines.filter((l) => l.startsWith('answered ')).map((l) => l.slice('answered '.length)));
  return [...declared].filter((route) => !answered.has(route)).sort();
}

/** `vitest run` with no file filter (flags only). */
function wholeSuite(): boolean {
  const args = process.argv.slice(process.argv.indexOf('run') + 1);
  return args.every((arg) => arg.startsWith('-'));
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
