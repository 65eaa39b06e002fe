import type { Config } from '@singleshot/config';
import { listen } from '@singleshot/http';
import { defaultReady, type Runtime } from '@singleshot/runtime';
import { OperatorSuppressions } from '@singleshot/intake';
import { FairQueue, FeedbackStore, ScheduledIndex, SourceStatusStore, SuppressionList, Suppressions, readSuppressionAudit, sourceRows } from '@singleshot/store';
import { createDashboardApp } from './app';
import { assertSafeBinding, credentialsOf, type DashboardCredentials } from './auth';
import { BOARD_PATH } from './board';
import { generateLoginToken } from './login-token';
import { runtimeReplay, type Replay } from './replay';
import { TenantKeys } from './tenant-keys';
import { tenantsView } from './tenants-view';
import { runtimeCancel } from './cancel';

export interface DashboardOptions {
  /** Default `dashboard.port` (`DASHBOARD_PORT`); 0 picks a free one. */
  port?: number;
  /** Default `dashboard.host` (loopback unless configured). */
  host?: string;
  /** Where the one-time login URL of a generated token is printed; default stderr. */
  printLogin?: (line: string) => void;
}

export interface Dashboard {
  port: number;
  host: string;
  replay: Replay;
  /** The file holding the generated token, when no credentials were configured. */
  tokenFile?: string;
  close(): Promise<void>;
}

/**
 * Throws (code `DASHBOARD_AUTH_REQUIRED`) when the dashboard would listen
 * beyond loopback without credentials; call it before connecting anything.
 */
export function checkDashboardConfig(config: Config, host = config.dashboard.host): void {
  assertSafeBinding(host, credentialsOf(config.dashboard.auth), config.dashboard.allowAnonymous);
}

/**
 * Starts the dashboard (Bull Board, admin API, health and metrics) on a runtime.
 * Never anonymous unless `dashboard.allowAnonymous` on loopback: without
 * configured credentials a random token is made, written to
 * `dashboard.tokenPath` (0600), and the login URL printed once to stderr. The
 * log line (`event: dashboard_token_generated`) names the file, never the token.
 */
export async function startDashboard(rt: Runtime, options: DashboardOptions = {}): Promise<Dashboard> {
  const host = options.host ?? rt.config.dashboard.host;
  const port = options.port ?? rt.config.dashboard.port;
  const { allowAnonymous, tokenPath, allowedOrigins } = rt.config.dashboard;
  const configured = credentialsOf(rt.config.dashboard.auth);
  assertSafeBinding(host, configured, allowAnonymous);
  let credentials: DashboardCredentials | undefined = configured;
  let tokenFile: string | undefined;
  if (!configured && !allowAnonymous) {
    const generated = generateLoginToken(tokenPath);
    credentials = { token: generated.token, generated: true };
    tokenFile = generated.file;
  }
  const logger = rt.logger.child({ component: 'dashboard' });
  const replay = runtimeReplay({ redis: rt.redis, keys: rt.keys, queues: rt.queues, retentionMs: rt.retentionMs, metrics: rt.metrics, logger });
  const cancel = runtimeCancel(
    {
      store: rt.cancellations,
      messages: rt.messages,
      replicas: rt.replicaWaits?.client,
    },
    { metrics: rt.metrics, logger },
  );
  const scheduled = new ScheduledIndex(rt.redis, rt.keys);
  const suppressions = {
    admin: new OperatorSuppressions(new Suppressions(rt.redis, rt.keys, { retentionMs: rt.retentionMs }), new SuppressionList(rt.redis, rt.keys), {
      channels: Object.keys(rt.config.providers),
      onAdded: () => rt.metrics.suppressionsAdded.inc({ reason: 'operator' }),
    }),
    audit: (options: { limit: number; before?: string }) => readSuppressionAudit(rt.redis, rt.keys, options),
  };
  const sourceStatus = new SourceStatusStore(rt.redis, rt.keys);
  const sources = { list: async () => sourceRows(rt.config.sources, rt.config.sources.length > 0 ? await sourceStatus.read() : new Map(), Date.now()) };
  const app = createDashboardApp({
    api: { operations: rt.operations, messages: rt.messages, journal: rt.journal, queues: rt.queues, replay, documents: rt.documents, feedback: new FeedbackStore(rt.redis, rt.keys, { retentionMs: rt.retentionMs }), sources, scheduled, digests: rt.digests, cancel, suppressions, tenants: tenantsView(rt.config, new FairQueue(rt.redis, rt.keys), rt.keys.partitions), routes: rt.config.routes, logger },
    queues: rt.queues,
    credentials,
    tenantKeys: new TenantKeys(rt.config.ingest.apiKeys),
    allowedOrigins,
    registry: rt.metrics.registry,
    ready: () => defaultReady(rt),
  });
  // The board's UI polls with keep-alive: a short idle timeout is fine, a stalled header is not.
  const server = await listen(app, port, host, { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000 });
  const auth = !credentials
    ? 'none'
    : credentials.generated
      ? 'generated-token'
      : [credentials.basic ? 'basic' : '', credentials.token !== undefined ? 'bearer' : ''].filter(Boolean).join('+');
  if (!credentials) logger.warn({ event: 'dashboard_anonymous', host }, 'dashboard.allowAnonymous: open to anyone who can reach this loopback address');
  if (credentials?.generated && tokenFile) {
    const origin = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
    // The only place the token is shown: stderr, once, for the person who started it.
    (options.printLogin ?? ((line) => process.stderr.write(`${line}\n`)))(
      `singleshot dashboard: log in at ${origin}/admin/login?token=${credentials.token} (token also in ${tokenFile})`,
    );
    logger.info({ event: 'dashboard_token_generated', tokenFile, loginPath: '/admin/login' }, 'dashboard token generated (login URL printed to stderr)');
  }
  logger.info({ event: 'dashboard_listening', port: server.port, host, auth, board: BOARD_PATH, api: '/admin/api' }, 'dashboard listening');
  return { port: server.port, host, replay, ...(tokenFile ? { tokenFile } : {}), close: server.close };
}
