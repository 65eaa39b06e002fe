import { runWorkerApp } from '@singleshot/runtime';
import { startDelivery } from './worker';

// `node dist/apps/delivery/main.js`: the delivery app alone (one container).
runWorkerApp('delivery', (config) => ({ port: config.delivery.metricsPort, host: config.delivery.metricsHost }), (rt) => startDelivery(rt)).catch((err: unknown) => {
  console.error('delivery failed to start:', err);
  process.exit(1);
});
