import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a load run's singleshot is configured with: one route from `source` to the sink. */
export interface FleetConfigOptions {
  redisUrl: string;
  /** Names the route and the `source` of the events it takes (`loadtest`, `bench`). */
  source: string;
  ingestPort: number;
  sinkPort: number;
  /** Decision's and delivery's job concurrency. */
  concurrency: number;
  /** Ingest's per-producer token bucket (`ingest.rateLimit`). */
  rateLimit: { perSecond: number; burst: number };
  /** `ingest.maxRequestsInFlight`; the default when absent. */
  maxRequestsInFlight?: number;
  /** Decision's and delivery's metrics ports; 0 (a free one) when absent. */
  metricsPorts?: { decision: number; delivery: number };
  /** Fields laid over the one route (`digest`, `template`). */
  route?: Record<string, unknown>;
  /** `sources` for the relay, which `singleshot start` runs in process when there is one. */
  sources?: readonly Record<string, unknown>[];
  /** Producer keys, each bound to its tenant (`ingest.apiKeys`): the fair queue between tenants is on. */
  tenantKeys?: ReadonlyArray<{ tenant: string; key: string }>;
  /** `tenancy.fairShare`; the default (`auto`) when absent. */
  fairShare?: 'on' | 'off';
}

/** Writes `singleshot.config.json` into `dir` and returns its path. */
export function writeFleetConfig(dir: string, o: FleetConfigOptions): string {
  const file = join(dir, 'singleshot.config.json');
  const sink = `http://127.0.0.1:${o.sinkPort}`;
  writeFileSync(
    file,
    JSON.stringify({
      redis: { url: o.redisUrl },
      log: { level: 'warn' },
      ingest: {
        port: o.ingestPort,
        host: '127.0.0.1',
        rateLimit: o.rateLimit,
        ...(o.maxRequestsInFlight ? { maxRequestsInFlight: o.maxRequestsInFlight } : {}),
        ...(o.tenantKeys ? { apiKeys: o.tenantKeys.map((t) => ({ name: t.tenant, key: t.key, sources: ['*'], tenant: t.tenant })) } : {}),
      },
      // `start` runs the dashboard too: on a free port, so two fleets (parallel test files, two runs) never race for 3000.
      dashboard: { port: 0 },
      decision: { concurrency: o.concurrency, metricsPort: o.metricsPorts?.decision ?? 0 },
      delivery: { concurrency: o.concurrency, metricsPort: o.metricsPorts?.delivery ?? 0 },
      routes: [
        {
          name: o.source,
          match: { source: o.source },
          action: 'notify',
          channel: 'webhook',
          recipients: 'event',
          template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}} was created' },
          ...o.route,
        },
      ],
      providers: {
        webhook: [{ name: 'sink', type: 'http', url: `${sink}/send`, lookupUrl: `${sink}/messages`, timeoutMs: 5000 }],
      },
      ...(o.sources && o.sources.length > 0 ? { sources: o.sources } : {}),
      ...(o.fairShare ? { tenancy: { fairShare: o.fairShare } } : {}),
    }),
  );
  return file;
}
