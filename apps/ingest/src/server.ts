import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Router } from 'express';
import { MessageStore } from '@singleshot/store';
import { documentLinkSecret, type RunningWorker, type Runtime } from '@singleshot/runtime';
import { createIngestApp } from './app';
import { documentsRouter } from './routes/documents';
import type { IngestContext } from './context';
import { acceptMail } from './mail-intake';
import { startMailboxPollers } from './mailbox-pollers';
import { providerWebhookRouter } from './routes/provider-webhooks';

export interface IngestApp {
  port: number;
  ctx: IngestContext;
  close(): Promise<void>;
}

/** Builds the ingest context from a runtime (plain wiring, no container). */
export function ingestContext(rt: Runtime): IngestContext {
  const knownSources = new Set<string>(['mail']);
  for (const route of rt.config.routes) if (route.match.source) knownSources.add(route.match.source);
  return {
    accept: {
      // The fail-fast producer connection: while Redis is away, answer 503 at once.
      messages: new MessageStore(rt.producer, rt.keys, { retentionMs: rt.retentionMs }),
      decideQueue: rt.producerQueues.decide,
      enqueueTimeoutMs: rt.config.ingest.enqueueTimeoutMs,
    },
    logger: rt.logger.child({ component: 'ingest' }),
    metrics: rt.metrics,
    mailboxIds: new Set(rt.config.mailboxes.map((m) => m.id)),
    signingSecrets: rt.config.ingest.signingSecrets,
    maxBodyBytes: rt.config.ingest.maxBodyBytes,
    maxMailBytes: rt.config.ingest.maxBodyBytes,
    sourceLabel: (source) => (knownSources.has(source) ? source : 'other'),
  };
}

/** Provider inbound formats (Mailgun, Postmark, SendGrid) from `config.webhooks`. */
export function webhooksFor(rt: Runtime): (ctx: IngestContext) => Router {
  const { mailgun, postmark, sendgrid } = rt.config.webhooks;
  return (ctx) =>
    providerWebhookRouter({
      mailboxes: rt.config.mailboxes,
      webhooks: {
        ...(mailgun?.signingKey ? { mailgun: { signingKey: mailgun.signingKey, toleranceSeconds: mailgun.toleranceSeconds } } : {}),
        ...(postmark?.password !== undefined ? { postmark: { username: postmark.username, password: postmark.password } } : {}),
        ...(sendgrid ? { sendgrid: { username: sendgrid.username, password: sendgrid.password, token: sendgrid.token } } : {}),
      },
      acceptMail: (parsed, via) => acceptMail(ctx, parsed, via),
      redis: rt.producer,
      keys: rt.keys,
      logger: ctx.logger,
      maxBodyBytes: Math.max(rt.config.ingest.maxBodyBytes, 27_262_976),
      maxMailBytes: ctx.maxMailBytes,
      onRefused: () => ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' }),
    });
}

/**
 * Starts the ingest HTTP server (and the IMAP pollers of configured mailboxes).
 * `port` 0 picks a free one.
 */
export async function startIngest(
  rt: Runtime,
  options: {
    port?: number;
    host?: string;
    providerWebhooks?: (ctx: IngestContext) => Router;
    pollers?: boolean;
    /** Workers running in the same process (embedded mode), reported by /readyz. */
    workers?: Record<string, RunningWorker>;
  } = {},
): Promise<IngestApp> {
  const ctx = ingestContext(rt);
  const ready = async () => {
    const checks: Record<string, string> = {};
    let ok = true;
    try {
      await rt.producer.ping();
      checks.redis = 'ok';
    } catch (err) {
      ok = false;
      checks.redis = `unreachable: ${(err as Error).message}`;
    }
    for (const [name, worker] of Object.entries(options.workers ?? {})) {
      const running = worker.isRunning();
      checks[`${name}-worker`] = running ? 'running' : 'stopped';
      ok &&= running;
    }
    return { ok, checks };
  };
  // Read once per process (the key never changes); a failed read is retried on the next download.
  let linkSecret: Promise<string> | undefined;
  const app = createIngestApp({
    ctx,
    registry: rt.metrics.registry,
    ready,
    providerWebhooks: (options.providerWebhooks ?? webhooksFor(rt))(ctx),
    documents: documentsRouter({
      store: rt.documentStore,
      secret: () => (linkSecret ??= documentLinkSecret(rt.redis, rt.keys, rt.config.documents.links.secret).catch((err: unknown) => {
        linkSecret = undefined;
        throw err;
      })),
      logger: rt.logger,
    }),
  });
  const port = options.port ?? rt.config.ingest.port;
  const host = options.host ?? rt.config.ingest.host;
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const actual = (server.address() as AddressInfo).port;
  ctx.logger.info({ port: actual, host }, 'ingest listening');
  const pollers = options.pollers === false ? undefined : await startMailboxPollers(rt, ctx, rt.metrics);
  return {
    port: actual,
    ctx,
    close: async () => {
      await pollers?.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}
