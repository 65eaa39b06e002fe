import type { IngestContext, IngestRoute } from '@singleshot/ingest';
import { startHealthServer } from '@singleshot/observability';
import { defaultReady, type RunningWorker, type Runtime } from '@singleshot/runtime';

export const APP_NAMES = ['ingest', 'decision', 'render', 'delivery', 'dashboard'] as const;
export type AppName = (typeof APP_NAMES)[number];

export interface RunningApps {
  ingestPort?: number;
  metricsPort?: number;
  close(): Promise<void>;
}

/**
 * Runs some or all apps in this process on one runtime (the embedded mode).
 * They share nothing but Redis, exactly as when each runs in its own container.
 * Each app's code is loaded only when it runs here: a delivery process never
 * loads ingest's HTTP stack or the dashboard, and so keeps a smaller heap
 * (less to load, less for every major GC to mark).
 */
export async function runApps(
  rt: Runtime,
  only: readonly AppName[],
  options: { ingestPort?: number; metricsPort?: number; providerWebhooks?: (ctx: IngestContext) => IngestRoute[] } = {},
): Promise<RunningApps> {
  const closers: (() => Promise<void>)[] = [];
  let ingestPort: number | undefined;
  let metricsPort: number | undefined;
  // Start consumers first, so the first accepted event finds workers running.
  const workers: Record<string, RunningWorker> = {};
  if (only.includes('delivery')) {
    const { startDelivery } = await import('@singleshot/delivery');
    const delivery = startDelivery(rt);
    workers.delivery = delivery.worker;
    closers.unshift(delivery.close);
  }
  if (only.includes('render')) {
    // Its own queue and workers: documents never hold up deliveries that need none.
    const { startRender } = await import('@singleshot/render');
    const render = startRender(rt);
    workers.render = render.worker;
    closers.unshift(render.close);
  }
  if (only.includes('decision')) {
    const { startDecision } = await import('@singleshot/decision');
    const decision = startDecision(rt);
    workers.decision = decision.worker;
    closers.unshift(decision.close);
  }
  if (only.includes('ingest') && rt.config.sources.length > 0) {
    // The relay reads `sources:` (outboxes, brokers) into the same acceptance
    // as ingest, so it runs where ingest runs; alone: dist/apps/relay/main.js.
    const { startRelay } = await import('@singleshot/relay');
    const relay = await startRelay(rt);
    workers.relay = relay;
    closers.unshift(relay.close);
  }
  if (only.includes('dashboard')) {
    const { startDashboard } = await import('@singleshot/dashboard');
    closers.unshift((await startDashboard(rt)).close);
  }
  if (only.includes('ingest')) {
    const { startIngest } = await import('@singleshot/ingest');
    const ingest = await startIngest(rt, {
      ...(options.ingestPort !== undefined ? { port: options.ingestPort } : {}),
      ...(options.providerWebhooks ? { providerWebhooks: options.providerWebhooks } : {}),
      workers,
    });
    ingestPort = ingest.port;
    closers.unshift(ingest.close);
  } else {
    // No HTTP server of our own: serve /healthz, /readyz, /metrics on the metrics port.
    const health = await startHealthServer({
      port: options.metricsPort ?? rt.config.decision.metricsPort,
      host: rt.config.decision.metricsHost,
      registry: rt.metrics.registry,
      ready: () => defaultReady(rt, workers),
      logger: rt.logger,
    });
    metricsPort = health.port;
    closers.unshift(health.close);
  }
  return {
    ...(ingestPort !== undefined ? { ingestPort } : {}),
    ...(metricsPort !== undefined ? { metricsPort } : {}),
    // Stop taking work first (ingest), then finish or release what is in flight.
    close: async () => {
      for (const close of closers) await close();
    },
  };
}
