import { createRuntimeOrExit, loadConfigOrExit, logTracing, onShutdown, startAppTracing } from '@singleshot/runtime';
import { IngestStartError } from './producer-auth';
import { checkIngestConfig, startIngest } from './server';

// `node dist/apps/ingest/main.js`: the ingest app alone; /healthz, /readyz and
// /metrics are served on its own HTTP port.
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  try {
    checkIngestConfig(config);
  } catch (err) {
    if (err instanceof IngestStartError) {
      console.error(`${err.code}: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  // Tracing (OTEL_* or the config's `tracing`) starts before the first request.
  const tracing = await startAppTracing(config, 'ingest');
  const rt = await createRuntimeOrExit(config, { app: 'ingest' });
  logTracing(rt.logger, tracing);
  const ingest = await startIngest(rt);
  onShutdown(rt.logger, async () => {
    await ingest.close();
    await rt.close();
    await tracing.shutdown();
  }, { timeoutMs: config.shutdownTimeoutMs });
}

main().catch((err: unknown) => {
  console.error('ingest failed to start:', err);
  process.exit(1);
});
