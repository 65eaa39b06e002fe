import { createRuntimeOrExit, loadConfigOrExit, logTracing, onShutdown, startAppTracing } from '@singleshot/runtime';
import { DashboardStartError } from './errors';
import { checkDashboardConfig, startDashboard } from './server';

// `node dist/apps/dashboard/main.js`: the dashboard alone (one container);
// /healthz, /readyz and /metrics are served on its own port.
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  try {
    checkDashboardConfig(config);
  } catch (err) {
    if (err instanceof DashboardStartError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  // Tracing (OTEL_* or the config's `tracing`) starts before the first request.
  const tracing = await startAppTracing(config, 'dashboard');
  const rt = await createRuntimeOrExit(config, { app: 'dashboard' });
  logTracing(rt.logger, tracing);
  const dashboard = await startDashboard(rt);
  onShutdown(rt.logger, async () => {
    await dashboard.close();
    await rt.close();
    await tracing.shutdown();
  }, { timeoutMs: config.shutdownTimeoutMs });
}

main().catch((err: unknown) => {
  console.error('dashboard failed to start:', err);
  process.exit(1);
});
