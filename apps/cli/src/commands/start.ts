import { readConfigFile, type Config } from '@singleshot/config';
import { SingleshotError } from '@singleshot/core';
import { DashboardStartError, checkDashboardConfig } from '@singleshot/dashboard';
import { IngestStartError, checkIngestConfig } from '@singleshot/ingest';
import { createRuntime, loadConfigOrExit, onShutdown } from '@singleshot/runtime';
import { NoRedisError, redisAnswers, startEmbeddedRedis, type EmbeddedRedis } from '../embedded-redis';
import { APP_NAMES, runApps, type AppName } from '../run-apps';

export function parseOnly(value: string | undefined): AppName[] {
  if (!value) return [...APP_NAMES];
  const names = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(APP_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`--only takes a comma-separated list of ${APP_NAMES.join(', ')} (got "${value}")`);
  }
  return names as AppName[];
}

/** True when the user named a Redis (REDIS_URL or redis.url in the config file). */
function redisWasNamed(file: string | undefined): boolean {
  if (process.env.REDIS_URL) return true;
  const path = file ?? process.env.SINGLESHOT_CONFIG;
  if (!path) {
    try {
      const raw = readConfigFile('singleshot.config.yaml') as { redis?: { url?: unknown } };
      return typeof raw?.redis?.url === 'string';
    } catch {
      return false;
    }
  }
  const raw = readConfigFile(path) as { redis?: { url?: unknown } };
  return typeof raw?.redis?.url === 'string';
}

/**
 * `singleshot start`: Redis from REDIS_URL or the config, else 127.0.0.1:6379 when
 * it answers, else an embedded redis-server under ./.singleshot/redis, else a
 * clear error saying how to get Redis.
 */
export async function startCommand(opts: { only?: string; config?: string }): Promise<void> {
  const only = parseOnly(opts.only);
  const config: Config = loadConfigOrExit(opts.config);
  refuseUnsafeListeners(config, only);
  let embedded: EmbeddedRedis | undefined;
  if (!redisWasNamed(opts.config) && !(await redisAnswers(config.redis.url))) {
    try {
      embedded = await startEmbeddedRedis();
    } catch (err) {
      if (err instanceof NoRedisError) {
        console.error(err.message);
        process.exit(3);
      }
      throw err;
    }
    config.redis.url = embedded.url;
  }
  const rt = await createRuntime(config, { app: 'singleshot' });
  if (embedded) rt.logger.info({ redis: embedded.url, dir: embedded.dir }, 'started an embedded redis-server (AOF on)');
  const apps = await runApps(rt, only);
  rt.logger.info({ event: 'singleshot_started', apps: only, ingestPort: apps.ingestPort, metricsPort: apps.metricsPort }, 'singleshot started');
  onShutdown(rt.logger, async () => {
    await apps.close();
    await rt.close();
    await embedded?.stop();
  });
}

/**
 * Nothing listens beyond loopback without authentication: an unsafe ingest or
 * dashboard address stops the process with exit 2 and a message saying what
 * to configure (before Redis is touched).
 */
function refuseUnsafeListeners(config: Config, only: readonly AppName[]): void {
  try {
    if (only.includes('ingest')) checkIngestConfig(config);
    if (only.includes('dashboard')) checkDashboardConfig(config);
  } catch (err) {
    if (err instanceof IngestStartError || err instanceof DashboardStartError) {
      console.error(`${(err as SingleshotError).code}: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}
