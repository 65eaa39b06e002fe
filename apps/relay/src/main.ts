import { startHealthServer } from '@singleshot/observability';
import { createRuntimeOrExit, defaultReady, loadConfigOrExit, onShutdown } from '@singleshot/runtime';
import { startRelay } from './relay';

// `node dist/apps/relay/main.js`: the relay alone (one container). It serves
// /healthz, /readyz and /metrics on decision.metricsPort (METRICS_PORT) and
// decision.metricsHost (METRICS_HOST), as the worker apps alone do.
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const rt = await createRuntimeOrExit(config, { app: 'relay' });
  if (config.sources.length === 0) rt.logger.warn({ event: 'relay_no_sources' }, 'no sources configured: the relay reads nothing');
  const relay = await startRelay(rt);
  const health = await startHealthServer({
    port: config.decision.metricsPort,
    host: config.decision.metricsHost,
    registry: rt.metrics.registry,
    ready: async () => {
      const base = await defaultReady({ redis: rt.producer });
      const checks = { ...base.checks, ...relay.checks() };
      return { ok: base.ok && relay.isRunning(), checks };
    },
    logger: rt.logger,
  });
  rt.logger.info({ event: 'relay_started', metricsPort: health.port, sources: config.sources.map((s) => s.name) }, 'relay started');
  const stop = async () => {
    await relay.close();
    await health.close();
    await rt.close();
  };
  onShutdown(rt.logger, stop, { timeoutMs: config.shutdownTimeoutMs });
}

main().catch((err: unknown) => {
  console.error('relay failed to start:', err);
  process.exit(1);
});
