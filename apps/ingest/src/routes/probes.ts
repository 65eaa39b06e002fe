import type { Registry } from 'prom-client';
import { livenessHandler, metricsHandler, probePaths, readinessHandler, type HealthLogger, type ReadinessCheck } from '@singleshot/observability';
import { sendJson } from '@singleshot/http';
import { rawRoute, type IngestRoute, type RouteDoc } from '../http/route';

/** The operation every app documents for a probe path (libs/observability). */
const probeDoc = (path: string): RouteDoc => (probePaths[path] as { get: RouteDoc }).get;

/**
 * `GET /healthz`, `/readyz`, `/metrics` and `/openapi.json`: open to
 * probes and Prometheus, outside the intake's in-flight cap.
 */
export function probeRoutes(deps: { registry: Registry; ready: ReadinessCheck; logger: HealthLogger; document(): object }): IngestRoute[] {
  const live = livenessHandler();
  const ready = readinessHandler(deps.ready, { logger: deps.logger });
  const metrics = metricsHandler(deps.registry);
  return [
    rawRoute({ method: 'GET', path: '/healthz', gate: 'open', handle: ({ req }, res) => live(req, res), doc: probeDoc('/healthz') }),
    rawRoute({ method: 'GET', path: '/readyz', gate: 'open', handle: ({ req }, res) => ready(req, res), doc: probeDoc('/readyz') }),
    rawRoute({ method: 'GET', path: '/metrics', gate: 'open', handle: ({ req }, res) => metrics(req, res), doc: probeDoc('/metrics') }),
    rawRoute({ method: 'GET', path: '/openapi.json', gate: 'open', handle: (_request, res) => sendJson(res, 200, deps.document()), doc: probeDoc('/openapi.json') }),
  ];
}
