import { runWorkerApp } from '@singleshot/runtime';
import { startRender } from './worker';

// `node dist/apps/render/main.js`: the render app alone (one container).
runWorkerApp('render', (config) => ({ port: config.documents.metricsPort, host: config.documents.metricsHost }), (rt) => startRender(rt)).catch((err: unknown) => {
  console.error('render failed to start:', err);
  process.exit(1);
});
