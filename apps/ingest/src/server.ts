import { normalizeRecipient } from '@singleshot/core';
import { Cancellations, FairQueue, FeedbackStore, MessageStore, Suppressions } from '@singleshot/store';
import { listen } from '@singleshot/http';
import { defaultReady, documentLinkSecret, readOnce, unsubscribeSecret, type RunningWorker } from '@singleshot/runtime';
import { Acceptor } from '@singleshot/intake';
import { maxPendingsOf, tenantsOf } from '@singleshot/config';
import { createTenantMetrics } from '@singleshot/observability';
import { IngestCounters } from './counters';
import { serveRoutes } from './http/serve';
import { IntakeGate } from './intake-gate';
import { TenantBacklog } from './tenant-backlog';
import { ingestRoutes } from './route-table';
import { documentsRoute } from './routes/documents';
import { preferencesRoutes } from './routes/preferences';
import { unsubscribeRoutes } from './routes/unsubscribe';
import type { IngestContext, IngestRuntime } from './context';
import { acceptMail } from './mail-intake';
import { startMailboxPollers } from './mailbox-pollers';
import { ProducerAuth, resolveIngestHost } from './producer-auth';
import type { IngestRoute } from './http/route';
import { providerWebhookRoutes } from './routes/provider-webhooks';
import { feedbackRoutes, type FeedbackRouteDeps } from './feedback/feedback-routes';

export interface IngestApp {
  port: number;
  host: string;
  ctx: IngestContext;
  /** Every endpoint it serves, in match order (the OpenAPI document is generated from these). */
  routes: readonly IngestRoute[];
  close(): Promise<void>;
}

/** Builds the ingest context from a runtime (plain wiring, no container). */
export function ingestContext(rt: IngestRuntime): IngestContext {
  const knownSources = new Set<string>(['mail']);
  for (const route of rt.config.routes) if (route.match.source) knownSources.add(route.match.source);
  const ingest = rt.config.ingest;
  // The fail-fast producer connection: while Redis is away, answer 503 at once.
  const messages = new MessageStore(rt.producer, rt.keys, { retentionMs: rt.retentionMs });
  return {
    accept: new Acceptor({
      messages,
      decideQueues: rt.producerQueues,
      keys: rt.keys,
      // On a cluster: no 2xx before the message record and its decide job are on a replica.
      replicas: rt.replicaWaits?.producer,
      enqueueTimeoutMs: ingest.enqueueTimeoutMs,
      tenants: createTenantMetrics(rt.metrics.registry, tenantsOf(rt.config)),
    }),
    logger: rt.logger.child({ component: 'ingest' }),
    metrics: rt.metrics,
    counters: new IngestCounters(rt.metrics),
    mailboxIds: new Set(rt.config.mailboxes.map((m) => m.id)),
    mailboxTenants: new Map(rt.config.mailboxes.flatMap((m) => (m.tenant === undefined ? [] : [[m.id, m.tenant] as const]))),
    auth: new ProducerAuth(ingest),
    limits: { maxRequestsInFlight: ingest.maxRequestsInFlight, maxJsonDepth: ingest.maxJsonDepth },
    maxBodyBytes: ingest.maxBodyBytes,
    maxMailBytes: ingest.maxBodyBytes,
    maxHorizonMs: rt.config.scheduling.maxHorizonDays * 86_400_000,
    cancels: {
      // The fail-fast producer connection, as acceptance: a cancel while Redis is away answers 503 at once.
      store: new Cancellations(rt.producer, rt.keys, { retentionMs: rt.retentionMs }),
      messages,
      replicas: rt.replicaWaits?.producer,
    },
    ...backlogOf(rt),
    sourceLabel: (source) => (knownSources.has(source) ? source : 'other'),
  };
}

/** The tenants' `maxPending`, read from the fair queues on the fail-fast producer connection; nothing when none has one. */
function backlogOf(rt: IngestRuntime): { backlog?: TenantBacklog } {
  if (!rt.config.tenancy.tenants.some((t) => t.maxPending !== undefined)) return {};
  const logger = rt.logger.child({ component: 'ingest' });
  const onError = (err: unknown) => logger.warn({ event: 'tenant_backlog_read_failed', err }, 'could not read a tenant backlog; the event is taken without its maxPending check');
  return { backlog: new TenantBacklog(new FairQueue(rt.producer, rt.keys), rt.keys.partitions, maxPendingsOf(rt.config), onError) };
}

/** Provider inbound formats (Mailgun, Postmark, SendGrid) from `config.webhooks`. */
export function webhooksFor(rt: IngestRuntime): (ctx: IngestContext) => IngestRoute[] {
  const { mailgun, postmark, sendgrid } = rt.config.webhooks;
  return (ctx) =>
    providerWebhookRoutes({
      mailboxes: rt.config.mailboxes,
      webhooks: {
        ...(mailgun?.signingKey ? { mailgun: { signingKey: mailgun.signingKey, toleranceSeconds: mailgun.toleranceSeconds } } : {}),
        ...(postmark?.password !== undefined ? { postmark: { username: postmark.username, password: postmark.password } } : {}),
        ...(sendgrid ? { sendgrid: { username: sendgrid.username, password: sendgrid.password, token: sendgrid.token } } : {}),
      },
      acceptMail: (parsed, via) => acceptMail(ctx, parsed, via, ctx.mailboxTenants.get(parsed.input.mailboxId)),
      redis: rt.producer,
      keys: rt.keys,
      logger: ctx.logger,
      maxBodyBytes: Math.max(rt.config.ingest.maxBodyBytes, 27_262_976),
      maxMailBytes: ctx.maxMailBytes,
      onRefused: () => ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' }),
    });
}

/**
 * Throws `INGEST_AUTH_REQUIRED` (IngestStartError) when ingest would listen
 * beyond loopback without producer credentials; call it before connecting anything.
 */
export function checkIngestConfig(config: IngestRuntime['config'], host?: string): string {
  return resolveIngestHost(config.ingest, host);
}

/**
 * Starts the ingest HTTP server (and the IMAP pollers of configured mailboxes).
 * `port` 0 picks a free one.
 */
export async function startIngest(
  rt: IngestRuntime,
  options: {
    port?: number;
    host?: string;
    providerWebhooks?: (ctx: IngestContext) => IngestRoute[];
    pollers?: boolean;
    /** The feedback endpoints' suppression port and SNS fetches (tests point these elsewhere). */
    feedback?: Pick<FeedbackRouteDeps, 'onSuppressionSignal' | 'sns'>;
    /** Workers running in the same process (embedded mode), reported by /readyz. */
    workers?: Record<string, RunningWorker>;
  } = {},
): Promise<IngestApp> {
  const host = resolveIngestHost(rt.config.ingest, options.host);
  const ctx = ingestContext(rt);
  const suppressions = new Suppressions(rt.producer, rt.keys, { retentionMs: rt.retentionMs });
  // On a cluster the feedback's suppressions are on a replica before the post
  // is answered: a failover cannot take one back (the preference and
  // unsubscribe pages' own changes do not wait).
  const signalled = new Suppressions(rt.producer, rt.keys, { retentionMs: rt.retentionMs, replicas: rt.replicaWaits?.producer });
  // Read once per process (the key never changes); a failed read is retried on the next download.
  let linkSecret: Promise<string> | undefined;
  const routes = ingestRoutes({
    ctx,
    registry: rt.metrics.registry,
    ready: () => defaultReady({ redis: rt.producer }, options.workers),
    providerWebhooks: (options.providerWebhooks ?? webhooksFor(rt))(ctx),
    feedback: feedbackRoutes({
      config: rt.config.feedback,
      store: new FeedbackStore(rt.producer, rt.keys, { retentionMs: rt.retentionMs }),
      redis: rt.producer,
      keys: rt.keys,
      metrics: rt.metrics,
      logger: ctx.logger,
      // A hard bounce, a complaint or a provider-side unsubscribe suppresses the
      // recipient on that channel before the feedback post is answered: no
      // claim after the 200 sends to them (claim.lua reads the copy).
      onSuppressionSignal: async (channel, recipient, reason, origin) => {
        const normalized = normalizeRecipient(recipient);
        const added = await signalled.add({ channel, recipient: normalized, reason, origin: reason === 'complaint' ? 'complaint' : reason === 'unsubscribe' ? 'unsubscribe' : 'bounce', by: `feedback:${origin.source}:${origin.eventId}` });
        if (added) rt.metrics.suppressionsAdded.inc({ reason });
      },
      ...options.feedback,
    }),
    documents: documentsRoute({
      store: rt.documentStore,
      secret: () => (linkSecret ??= documentLinkSecret(rt.redis, rt.keys, rt.config.documents.links.secret).catch((err: unknown) => {
        linkSecret = undefined;
        throw err;
      })),
      logger: rt.logger,
    }),
    preferences: preferencesRoutes({ suppressions, logger: ctx.logger, maxBodyBytes: ctx.maxBodyBytes, maxJsonDepth: ctx.limits.maxJsonDepth }),
    unsubscribe: unsubscribeRoutes({ suppressions, logger: ctx.logger, secret: readOnce(() => unsubscribeSecret(rt.redis, rt.keys, rt.config.unsubscribe.secret)) }),
  });
  const { ingest } = rt.config;
  // One gate for every route: the in-flight cap and each key's bucket count them all.
  const server = await listen(serveRoutes(routes, ctx, new IntakeGate(ctx)), options.port ?? ingest.port, host, ingest);
  const auth = ctx.auth.required ? [ingest.apiKeys.length ? `${ingest.apiKeys.length} api keys` : '', ingest.signingSecrets.length ? 'hmac' : ''].filter(Boolean).join('+') : 'none';
  ctx.logger.info({ event: 'ingest_listening', port: server.port, host, auth }, 'ingest listening');
  if (!ctx.auth.required) ctx.logger.warn({ event: 'ingest_anonymous', host }, 'ingest accepts anonymous producers (no ingest.apiKeys or signingSecrets)');
  const pollers = options.pollers === false ? undefined : await startMailboxPollers(rt, ctx, rt.metrics);
  return {
    port: server.port,
    host,
    ctx,
    routes,
    close: async () => {
      await pollers?.stop();
      await server.close();
    },
  };
}
