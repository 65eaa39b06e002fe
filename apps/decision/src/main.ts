import { loadConfigOrExit, runWorkerApp, startAppTracing } from '@singleshot/runtime';
import { startDecision } from './worker';

// `node dist/apps/decision/main.js`: the decision app alone (one container).
// Tracing (OTEL_* or the config's `tracing`) starts before the first job.
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const tracing = await startAppTracing(config, 'decision');
  await runWorkerApp('decision', (c) => ({ port: c.decision.metricsPort, host: c.decision.metricsHost }), startDecision, { config, tracing });
}

main().catch((err: unknown) => {
  console.error('decision failed to start:', err);
  process.exit(1);
});
