import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import {
  livenessHandler,
  metricsHandler,
  readinessHandler,
  type HealthLogger,
  type HttpHandler,
  type ReadinessCheck,
} from './http-handlers';
import { sendJson } from '@singleshot/http';

export interface HealthServerOptions {
  /** `0` picks a free port (returned and logged): several replicas can share a host. */
  port: number;
  /** Default `127.0.0.1`: `/metrics` is unauthenticated, so a wider address is the caller's explicit choice (config `metricsHost`). */
  host?: string;
  registry: Registry;
  ready: ReadinessCheck;
  logger: HealthLogger;
  /** Readiness check deadline; default 5000 ms. */
  readyTimeoutMs?: number;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The `/healthz`, `/readyz` and `/metrics` server of an app without an HTTP
 * server of its own (decision, delivery). Resolves once listening.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const host = options.host ?? '127.0.0.1';
  const routes: Record<string, HttpHandler> = {
    '/healthz': livenessHandler(),
    '/readyz': readinessHandler(options.ready, { timeoutMs: options.readyTimeoutMs, logger: options.logger }),
    '/metrics': metricsHandler(options.registry),
  };

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const handler = routes[path];
    if (!handler) {
      sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no route ${path}` } });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendJson(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `${req.method ?? ''} not allowed on ${path}` } });
      return;
    }
    handler(req, res).catch((err: unknown) => {
      options.logger.warn({ event: 'health_handler_failed', err, path }, 'health server handler failed');
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL', message: 'internal error' } });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => options.logger.warn({ event: 'health_server_error', err }, 'health server error'));
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ event: 'health_server_listening', port, host }, 'health server listening');

  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets from Prometheus would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}
