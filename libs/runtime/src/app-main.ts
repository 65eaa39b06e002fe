import { ConfigError, loadConfig, type Config } from '@singleshot/config';
import { startHealthServer, type HealthServer, type Logger } from '@singleshot/observability';
import { LayoutError, createRedis, layoutRefusal, redisRefusals, refusalCode } from '@singleshot/store';
import type { StartedTracing } from '@singleshot/tracing';
import { logTracing } from './app-tracing';
import { checkLayoutAtStart } from './layout-gate';
import { createRuntime, keysOf, redisConnectionOptions, type Runtime } from './runtime';
import { onShutdown } from './shutdown';

/**
 * Loads the config or exits with every problem listed by path (never a stack
 * trace for a typo in a YAML file).
 */
export function loadConfigOrExit(file?: string): Config {
  try {
    return loadConfig(file ? { file } : {}).config;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * Creates the runtime, or exits (code 2, no stack trace) with every template
 * problem listed by path (templates are compiled at start; MJML can only be
 * checked then), or with why the Redis layout is one this code does not know.
 */
export async function createRuntimeOrExit(config: Config, options: { app: string }): Promise<Runtime> {
  try {
    return await createRuntime(config, options);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    if (err instanceof LayoutError) {
      console.error(`${err.code}: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * For a process that starts no runtime of its own (the supervisor of
 * `singleshot start`'s app processes): the layout check of `createRuntime`,
 * done once before any child starts, exiting 2 as `createRuntimeOrExit` does.
 */
export async function checkLayoutOrExit(config: Config, logger: Logger): Promise<void> {
  const redis = createRedis(redisConnectionOptions(config, 'client', 'singleshot:supervisor:layout'));
  redis.on('error', () => {
    // Reported by the layout check's wait (layout_check_pending); a connection error alone changes nothing here.
  });
  try {
    await checkLayoutAtStart(redis, keysOf(config), logger);
  } catch (err) {
    if (err instanceof LayoutError) {
      console.error(`${err.code}: ${err.message}`);
      process.exit(2);
    }
    throw err;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/**
 * The `main.ts` of a worker app run alone (one container each): runtime,
 * the app, a health/metrics server on `metricsHost:metricsPort` (port 0 = free, logged),
 * graceful shutdown. `options.config` and `options.tracing`: what main.ts
 * loaded and started before (tracing must be on before the first job); the
 * tracing is flushed last at shutdown.
 */
export async function runWorkerApp(
  app: string,
  listenOn: (config: Config) => { port: number; host: string },
  start: (rt: Runtime) => { close(): Promise<void>; worker?: RunningWorker },
  options: { config?: Config; tracing?: StartedTracing } = {},
): Promise<void> {
  const config = options.config ?? loadConfigOrExit();
  const rt = await createRuntimeOrExit(config, { app });
  if (options.tracing) logTracing(rt.logger, options.tracing);
  const instance = start(rt);
  const health: HealthServer = await startHealthServer({
    ...listenOn(config),
    registry: rt.metrics.registry,
    ready: () => defaultReady(rt, instance.worker ? { [app]: instance.worker } : {}),
    logger: rt.logger,
  });
  rt.logger.info({ event: 'app_started', metricsPort: health.port }, `${app} started`);
  onShutdown(rt.logger, async () => {
    await instance.close();
    await health.close();
    await rt.close();
    await options.tracing?.shutdown();
  }, { timeoutMs: config.shutdownTimeoutMs });
}

/** What readiness needs of a BullMQ worker. */
export interface RunningWorker {
  isRunning(): boolean;
  /** Queue partitions without a working consumer (readiness names them). */
  stuckPartitions?(): string[];
}

/**
 * The one readiness check of every app (`/readyz`, docs/contract.md): ready
 * when Redis answers on the given connection (ingest passes its fail-fast
 * producer connection) without refusing commands (`redis: "refusing: OOM"`,
 * from the process's `redisRefusals`), no script met a newer Redis layout
 * (`layout: "upgrade required: …"`), and every given worker is running.
 */
export async function defaultReady(
  rt: { redis: Pick<Runtime['redis'], 'ping'> },
  workers: Record<string, RunningWorker> = {},
): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const checks: Record<string, string> = {};
  let ok = true;
  try {
    await rt.redis.ping();
    // A Redis that answers PING may still refuse every write.
    const refusing = redisRefusals.refusing();
    checks.redis = refusing ? `refusing: ${refusing}` : 'ok';
    ok = !refusing;
  } catch (err) {
    ok = false;
    // Under MISCONF Redis refuses even PING.
    const refused = refusalCode(err);
    checks.redis = refused ? `refusing: ${refused}` : `unreachable: ${(err as Error).message}`;
  }
  const layout = layoutRefusal.refused();
  if (layout !== undefined) {
    checks.layout = `upgrade required: Redis holds layout ${layout}`;
    ok = false;
  }
  for (const [name, worker] of Object.entries(workers)) {
    const running = worker.isRunning();
    const stuck = worker.stuckPartitions?.() ?? [];
    checks[`${name}-worker`] = stuck.length > 0 ? `no working consumer: ${stuck.join(', ')}` : running ? 'running' : 'stopped';
    ok &&= running && stuck.length === 0;
  }
  return { ok, checks };
}
