import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '@singleshot/config';
import { defaultReady, type Runtime } from '@singleshot/runtime';
import { createDashboardApp } from './app';
import { assertSafeBinding, credentialsOf } from './auth';
import { BOARD_PATH } from './board';
import { runtimeReplay, type Replay } from './replay';

export interface DashboardOptions {
  /** Default `dashboard.port` (`DASHBOARD_PORT`); 0 picks a free one. */
  port?: number;
  /** Default `dashboard.host` (loopback unless configured). */
  host?: string;
}

export interface Dashboard {
  port: number;
  host: string;
  replay: Replay;
  close(): Promise<void>;
}

/**
 * Throws (code `DASHBOARD_AUTH_REQUIRED`) when the dashboard would listen
 * beyond loopback without credentials; call it before connecting anything.
 */
export function checkDashboardConfig(config: Config, host = config.dashboard.host): void {
  assertSafeBinding(host, credentialsOf(config.dashboard.auth));
}

/** Starts the dashboard (Bull Board, admin API, health and metrics) on a runtime. */
export async function startDashboard(rt: Runtime, options: DashboardOptions = {}): Promise<Dashboard> {
  const host = options.host ?? rt.config.dashboard.host;
  const port = options.port ?? rt.config.dashboard.port;
  const credentials = credentialsOf(rt.config.dashboard.auth);
  assertSafeBinding(host, credentials);
  const logger = rt.logger.child({ component: 'dashboard' });
  const replay = runtimeReplay({ redis: rt.redis, keys: rt.keys, queues: rt.queues, retentionMs: rt.retentionMs, metrics: rt.metrics, logger });
  const app = createDashboardApp({
    api: { operations: rt.operations, messages: rt.messages, journal: rt.journal, queues: rt.queues, replay, logger },
    queues: rt.queues,
    credentials,
    registry: rt.metrics.registry,
    ready: () => defaultReady(rt),
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.once('error', reject);
  });
  const actual = (server.address() as AddressInfo).port;
  const auth = credentials ? [credentials.basic ? 'basic' : '', credentials.token !== undefined ? 'bearer' : ''].filter(Boolean).join('+') : 'none';
  if (!credentials) logger.warn({ host }, 'dashboard has no credentials: open to anyone who can reach this loopback address');
  logger.info({ event: 'dashboard_listening', port: actual, host, auth, board: BOARD_PATH, api: '/admin/api' }, 'dashboard listening');
  return {
    port: actual,
    host,
    replay,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The board's UI polls with keep-alive; idle sockets would hold close() open.
        server.closeIdleConnections();
      }),
  };
}
