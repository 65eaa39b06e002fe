import { runWorkerApp } from '@singleshot/runtime';
import { startRender } from './worker';

// `node dist/apps/render/main.js`: the render app alone (one container).
runWorkerApp('render', (config) => config.documents.metricsPort, (rt) => startRender(rt)).catch((err: unknown) => {
  console.error('render failed to start:', err);
  process.exit(1);
});
