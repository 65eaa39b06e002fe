import { runWorkerApp } from '@singleshot/runtime';
import { startDecision } from './worker';

// `node dist/apps/decision/main.js`: the decision app alone (one container).
runWorkerApp('decision', (config) => ({ port: config.decision.metricsPort, host: config.decision.metricsHost }), startDecision).catch((err: unknown) => {
  console.error('decision failed to start:', err);
  process.exit(1);
});
