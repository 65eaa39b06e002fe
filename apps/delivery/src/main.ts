import { loadConfigOrExit, runWorkerApp, startAppTracing } from '@singleshot/runtime';
import { startDelivery } from './worker';

// `node dist/apps/delivery/main.js`: the delivery app alone (one container).
// Tracing (OTEL_* or the config's `tracing`) starts before the first job.
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const tracing = await startAppTracing(config, 'delivery');
  await runWorkerApp('delivery', (c) => ({ port: c.delivery.metricsPort, host: c.delivery.metricsHost }), (rt) => startDelivery(rt), { config, tracing });
}

main().catch((err: unknown) => {
  console.error('delivery failed to start:', err);
  process.exit(1);
});
