import { loadConfigOrExit, runWorkerApp, startAppTracing } from '@singleshot/runtime';
import { startRender } from './worker';

// `node dist/apps/render/main.js`: the render app alone (one container).
// Tracing (OTEL_* or the config's `tracing`) starts before the first job.
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const tracing = await startAppTracing(config, 'render');
  await runWorkerApp('render', (c) => ({ port: c.documents.metricsPort, host: c.documents.metricsHost }), (rt) => startRender(rt), { config, tracing });
}

main().catch((err: unknown) => {
  console.error('render failed to start:', err);
  process.exit(1);
});
