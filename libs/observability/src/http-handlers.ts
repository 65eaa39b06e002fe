import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { sendJson } from '@singleshot/http';

/** A plain node handler; express 5 accepts it as a route handler as it is. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface Readiness {
  ok: boolean;
  /** Check name → short state (`ok`, `down: ECONNREFUSED`, …). */
  checks: Record<string, string>;
}

export type ReadinessCheck = () => Promise<Readiness>;

/** Narrow logging port: a pino Logger fits, so does a small test double. */
export interface HealthLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** `GET /healthz`: the process is alive and serving. Deliberately checks nothing else. */
export function livenessHandler(): HttpHandler {
  return async (_req, res) => sendJson(res, 200, { status: 'ok' });
}

/**
 * `GET /readyz`: 200 when `ready()` says ok, else 503 with the checks. A check
 * that throws or hangs past `timeoutMs` (a Redis client queueing commands while
 * offline does hang) is not ready, never a 500 or a stuck probe.
 */
export function readinessHandler(
  ready: ReadinessCheck,
  options: { timeoutMs?: number; logger?: HealthLogger } = {},
): HttpHandler {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return async (_req, res) => {
    let result: Readiness;
    let timer: NodeJS.Timeout | undefined;
    try {
      result = await Promise.race([
        ready(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`readiness check timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      options.logger?.warn({ event: 'readiness_check_failed', err }, 'readiness check failed');
      result = { ok: false, checks: { ready: `error: ${err instanceof Error ? err.message : String(err)}` } };
    } finally {
      clearTimeout(timer);
    }
    sendJson(res, result.ok ? 200 : 503, { status: result.ok ? 'ok' : 'unavailable', checks: result.checks });
  };
}

/** `GET /metrics`: the registry in Prometheus text format. */
export function metricsHandler(registry: Registry): HttpHandler {
  return async (_req, res) => {
    let body: string;
    try {
      body = await registry.metrics();
    } catch (err) {
      sendJson(res, 500, { error: { code: 'METRICS_FAILED', message: err instanceof Error ? err.message : String(err) } });
      return;
    }
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
    res.end(body);
  };
}
