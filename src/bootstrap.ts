import { ensureDatabase, migrateDatabase } from './db/migrate.js';
import { ConfigError, loadConfig, type Config } from './env.js';
import type { Services } from './http/context.js';
import { createServices } from './services.js';

/** Loads configuration or exits with a message naming the wrong variable. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Every entry point starts the same way: configuration, database (created and migrated), connections. */
export async function bootstrap(config: Config = loadConfigOrExit()): Promise<Services> {
  await ensureDatabase(config.DATABASE_URL);
  await migrateDatabase(config.DATABASE_URL);
  return createServices(config);
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal} received, shutting down\n`);
    stop().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
