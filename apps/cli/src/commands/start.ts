import { availableParallelism } from 'node:os';
import { readConfigFile, type Config } from '@singleshot/config';
import { createLogger } from '@singleshot/observability';
import { SingleshotError } from '@singleshot/core';
import { checkLayoutOrExit, createRuntimeOrExit, loadConfigOrExit, logTracing, onShutdown, startAppTracing } from '@singleshot/runtime';
import { NoRedisError, redisAnswers, startEmbeddedRedis, type EmbeddedRedis } from '../embedded-redis';
import { APP_NAMES, runApps, type AppName } from '../run-apps';
import { appGroups, stopWhenSupervisorGoes, superviseApps } from '../supervise';

/** How much longer than its children the supervising process waits for a stop. */
const SUPERVISOR_GRACE_MS = 1_000;

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
 * The default `--processes`: one app process per core, at most 3 (ingest |
 * decision | delivery). Ingest keeps a process of its own from 2 cores on, so
 * the HTTP path never waits behind the workers. On 2 cores a third process
 * only oversubscribes them: it adds wake-ups and cold caches and does no more
 * work at once, so it costs CPU per notification without adding throughput
 * (docs/cli.md; `npm run bench` compares the layouts).
 */
export function defaultProcesses(cores: number): number {
  return Math.min(3, Math.max(1, Math.floor(cores)));
}

/** `--processes N` (a positive integer), else `defaultProcesses` of this machine. */
export function parseProcesses(value: string | undefined): number {
  if (value === undefined) return defaultProcesses(availableParallelism());
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--processes takes an integer >= 1 (got "${value}")`);
  return n;
}

/**
 * `singleshot start`: Redis from REDIS_URL or the config, else 127.0.0.1:6379 when
 * it answers, else an embedded redis-server under ./.singleshot/redis, else a
 * clear error saying how to get Redis. On a multi-core machine (or with
 * `--processes N`) the apps run in child processes of this one command.
 */
export async function startCommand(opts: { only?: string; config?: string; processes?: string }): Promise<void> {
  const only = parseOnly(opts.only);
  const processes = parseProcesses(opts.processes);
  const config: Config = loadConfigOrExit(opts.config);
  await refuseUnsafeListeners(config, only);
  let embedded: EmbeddedRedis | undefined;
  if (!config.redis.cluster && !redisWasNamed(opts.config) && !(await redisAnswers(config.redis.url))) {
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
  const groups = appGroups(only, processes);
  if (groups.length > 1) {
    const logger = createLogger({ app: 'singleshot', level: config.log.level });
    if (embedded) logger.info({ event: 'embedded_redis_started', redis: embedded.url, dir: embedded.dir }, 'started an embedded redis-server (AOF on)');
    // Refused here once, rather than by every child in turn, each restarted until the supervisor gives up.
    await checkLayoutOrExit(config, logger);
    const supervisor = superviseApps({
      groups,
      ...(opts.config ? { config: opts.config } : {}),
      redisUrl: config.redis.url,
      logger,
      onGiveUp: () => process.kill(process.pid, 'SIGTERM'),
    });
    logger.info({ event: 'singleshot_started', apps: only, processes: groups }, 'singleshot started');
    // A second longer than the children's own deadline, so a child that gives
    // up says what it abandoned before this process leaves.
    onShutdown(
      logger,
      async () => {
        await supervisor.stop();
        await embedded?.stop();
      },
      { timeoutMs: config.shutdownTimeoutMs + SUPERVISOR_GRACE_MS },
    );
    return;
  }
  const whenSupervisorStops = stopWhenSupervisorGoes();
  // Tracing (OTEL_* or the config's `tracing`) starts before the apps; one app alone names its service after it.
  const tracing = await startAppTracing(config, only.length === 1 ? (only[0] as string) : 'all');
  const rt = await createRuntimeOrExit(config, { app: 'singleshot' });
  logTracing(rt.logger, tracing);
  if (embedded) rt.logger.info({ event: 'embedded_redis_started', redis: embedded.url, dir: embedded.dir }, 'started an embedded redis-server (AOF on)');
  // Alone in its process, delivery serves health and metrics on its own port.
  const apps = await runApps(rt, only, only.length === 1 && only[0] === 'delivery' ? { metricsPort: rt.config.delivery.metricsPort } : {});
  rt.logger.info({ event: 'singleshot_started', apps: only, ingestPort: apps.ingestPort, metricsPort: apps.metricsPort }, 'singleshot started');
  whenSupervisorStops(
    onShutdown(
      rt.logger,
      async () => {
        await apps.close();
        await rt.close();
        await tracing.shutdown();
        await embedded?.stop();
      },
      { timeoutMs: config.shutdownTimeoutMs },
    ),
  );
}

/**
 * Nothing listens beyond loopback without authentication: an unsafe ingest or
 * dashboard address stops the process with exit 2 and a message saying what
 * to configure (before Redis is touched).
 */
async function refuseUnsafeListeners(config: Config, only: readonly AppName[]): Promise<void> {
  // Each app's module loads only where that app runs (or is supervised).
  const ingest = only.includes('ingest') ? await import('@singleshot/ingest') : undefined;
  const dashboard = only.includes('dashboard') ? await import('@singleshot/dashboard') : undefined;
  try {
    ingest?.checkIngestConfig(config);
    dashboard?.checkDashboardConfig(config);
  } catch (err) {
    if ((ingest && err instanceof ingest.IngestStartError) || (dashboard && err instanceof dashboard.DashboardStartError)) {
      console.error(`${(err as SingleshotError).code}: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}
