import type { Registry } from 'prom-client';
import type { ReadinessCheck } from '@singleshot/observability';
import type { IngestContext } from './context';
import type { IngestRoute } from './http/route';
import { ingestOpenApi } from './openapi';
import { cancellationsRoute } from './routes/cancellations';
import { eventsRoute } from './routes/events';
import { rawMailRoute } from './routes/mail-raw';
import { probeRoutes } from './routes/probes';

export interface IngestRoutesOptions {
  ctx: IngestContext;
  registry: Registry;
  ready: ReadinessCheck;
  /** Provider-specific inbound formats (`/v1/mail/inbound/:provider`…; providerWebhookRoutes). */
  providerWebhooks?: readonly IngestRoute[];
  /** Provider delivery feedback (`/v1/feedback/<provider>`; feedbackRoutes). */
  feedback?: readonly IngestRoute[];
  /** Signed document links (`/v1/documents/…`; documentsRoute). */
  documents?: IngestRoute;
  /** A recipient's opt-outs (`/v1/preferences/{recipient}`; preferencesRoutes). */
  preferences?: readonly IngestRoute[];
  /** One-click unsubscribe links (`/v1/unsubscribe/<token>`; unsubscribeRoutes). */
  unsubscribe?: readonly IngestRoute[];
}

/**
 * Every ingest endpoint, one definition each, in match order (the
 * producers' `POST /v1/events` first). The OpenAPI document served at
 * `/openapi.json` is generated from this very table.
 */
export function ingestRoutes({ ctx, registry, ready, providerWebhooks = [], feedback = [], documents, preferences = [], unsubscribe = [] }: IngestRoutesOptions): IngestRoute[] {
  let document: object | undefined;
  const routes: IngestRoute[] = [
    eventsRoute(ctx),
    ...(ctx.cancels ? [cancellationsRoute(ctx)] : []),
    rawMailRoute(ctx),
    ...providerWebhooks,
    ...feedback,
    ...(documents ? [documents] : []),
    ...preferences,
    ...unsubscribe,
    ...probeRoutes({ registry, ready, logger: ctx.logger, document: () => (document ??= ingestOpenApi(routes)) }),
  ];
  return routes;
}
