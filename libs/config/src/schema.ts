import { z } from 'zod';
import { mailboxSchema } from './mailbox-schema';
import { httpUrl, listenPort, nonEmpty, nonNegativeInt, positiveInt, rateLimitSchema } from './primitives';
import { ingestSchema } from './ingest-schema';
import { tenancySchema } from './tenancy-schema';
import { providersSchema } from './provider-schema';
import { routeSchema } from './route-schema';
import { documentsSchema } from './document-schema';
import { sourcesSchema } from './source-schema';
import { feedbackSchema } from './feedback-schema';
import { unsubscribeSchema } from './unsubscribe-schema';

/**
 * The config file (docs/contract.md "Config file"). Every section is optional and
 * filled with defaults; unknown keys are errors. Secrets (`password`, `token`,
 * `signingSecrets`) may instead be given as `<key>File`, read at load time.
 * Cross-field rules (a route's channel has providers, names are unique) live
 * in cross-checks.ts so they are reported even when other fields are invalid.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const redisSchema = z.strictObject({
  url: z
    .url({ protocol: /^rediss?$/, error: 'Invalid URL: expected redis:// or rediss://' })
    .default('redis://127.0.0.1:6379')
    .describe('`redis://` or `rediss://` (TLS). `REDIS_URL` overrides it.'),
  password: z.string().optional().describe('Redis password (`AUTH`); or `passwordFile`.'),
  passwordFile: nonEmpty.optional().describe('A file holding the password, read at start.'),
  tls: z
    .strictObject({
      rejectUnauthorized: z.boolean().default(true).describe('Verify the server certificate.'),
      ca: z.string().optional().describe('PEM of the CA to trust (or `caFile`).'),
      caFile: nonEmpty.optional().describe('A file holding the CA PEM.'),
    })
    .optional()
    .describe('TLS options; present (even `{}`) turns TLS on.'),
  keyPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'may contain only letters, digits, "_", "." and "-"')
    .default('ss')
    .describe('Prefix of every key, so several deployments can share one Redis.'),
  shards: z
    .int()
    .min(1)
    .max(1024)
    .default(16)
    .describe('Number of operation shards (`{sNN}` hash tags, so the scripts run on a Redis Cluster). Changing it re-homes keys: set it once; `64` on a new cluster (see scaling.md).'),
  checkOnStart: z
    .boolean()
    .default(true)
    .describe('At start, warn when the server (on a cluster, every master) is older than 6.2, evicts (`maxmemory-policy` not `noeviction`) or has AOF off.'),
  cluster: z
    .strictObject({
      nodes: z
        .array(z.string().regex(/^\[?[^\s\]]+\]?:\d{1,5}$/, 'expected host:port'))
        .min(1, 'needs at least one host:port')
        .describe('Seed nodes (`host:port`); the client discovers the rest. `REDIS_CLUSTER_NODES=host:port,…` sets them.'),
      natMap: z
        .record(z.string(), z.strictObject({ host: nonEmpty.describe('Reachable host.'), port: listenPort.describe('Reachable port.') }))
        .optional()
        .meta({ description: 'Announced `host:port` → reachable address, for a cluster behind NAT or container port mappings.', keyName: 'host:port' }),
      waitReplicas: nonNegativeInt
        .default(1)
        .describe('Replicas that must acknowledge an acceptance and a fenced commit (Redis `WAIT`) before it counts; 0 = do not wait.'),
      waitTimeoutMs: positiveInt.default(1_000).describe('How long `WAIT` may take; past it ingest answers 503 and a commit is retried.'),
    })
    .optional()
    .describe('A Redis Cluster instead of `url`. `password` and `tls` apply to every node.'),
  partitions: z
    .int()
    .min(1)
    .max(1024)
    .optional()
    .describe('Queue partitions: the decide and deliver queues are each split into this many BullMQ queues with their own hash tag. Default 1 on a single Redis, `shards` on a cluster. See scaling.md before changing it on a live system.'),
  formerPartitions: z
    .int()
    .min(1)
    .max(1024)
    .optional()
    .describe('Only while changing `partitions`: the former count. Workers keep draining the former layout (producers no longer write there) until it is removed.'),
});

export const logSchema = z.strictObject({
  level: z.enum(LOG_LEVELS).default('info').describe('Least severe level logged; `LOG_LEVEL` overrides it.'),
});

/**
 * OpenTelemetry traces (docs/tracing.md). The standard `OTEL_*` variables
 * turn tracing on too and take precedence over this section.
 */
export const tracingSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Export traces over OTLP/HTTP (JSON). Also on when `OTEL_TRACES_EXPORTER=otlp` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turns it off.'),
  endpoint: httpUrl.optional().describe('The collector\'s OTLP/HTTP base URL (`/v1/traces` is appended), as `OTEL_EXPORTER_OTLP_ENDPOINT`, which overrides it; default `http://localhost:4318`.'),
  sampleRatio: z.number().min(0).max(1).default(1).describe('Share of new traces recorded (parent-based: a traced producer\'s decision is kept); `OTEL_TRACES_SAMPLER_ARG` overrides it.'),
});

export const dashboardSchema = z.strictObject({
  port: listenPort.default(3000).describe('Port of Bull Board and the admin API; `DASHBOARD_PORT` overrides it.'),
  host: nonEmpty.default('127.0.0.1').describe('Listen address. Loopback by default: the dashboard can replay dead operations.'),
  auth: z
    .strictObject({
      username: nonEmpty.optional().describe('Basic auth user (needs a password).'),
      password: z.string().optional().describe('Basic auth password (or `passwordFile`).'),
      passwordFile: nonEmpty.optional().describe('A file holding the password.'),
      token: z.string().optional().describe('Bearer token (or `tokenFile`).'),
      tokenFile: nonEmpty.optional().describe('A file holding the token.'),
    })
    .superRefine((auth, ctx) => {
      if (auth.username !== undefined && auth.password === undefined) {
        ctx.addIssue({ code: 'custom', path: ['password'], message: 'username needs a password or passwordFile' });
      }
      if (auth.password !== undefined && auth.username === undefined) {
        ctx.addIssue({ code: 'custom', path: ['username'], message: 'password needs a username' });
      }
    })
    .optional()
    .describe('Basic auth (`username` + `password`) and/or a bearer `token`. Without it a login token is generated at every start.'),
  allowAnonymous: z
    .boolean()
    .default(false)
    .describe('Loopback only: serve without any credentials (not even the generated token). Refused on any other host.'),
  tokenPath: nonEmpty
    .default('.singleshot/dashboard-token')
    .describe('Where the generated login token is written (mode 0600) when no credentials are configured.'),
  allowedOrigins: z
    .array(z.url())
    .default([])
    .describe("Origins besides the dashboard's own (from the `Host` header) allowed to make state-changing requests, e.g. a reverse proxy's `https://ops.example.com`."),
});

export const decisionSchema = z.strictObject({
  concurrency: positiveInt.default(16).describe('Decide jobs run at once per process.'),
  metricsPort: listenPort.default(9464).describe('Port of the health/metrics server; `METRICS_PORT` overrides it, `0` picks a free one.'),
  metricsHost: nonEmpty
    .default('127.0.0.1')
    .describe('Address of the health/metrics server. Loopback by default: `/metrics` is unauthenticated, so opening it (`0.0.0.0` for a Prometheus on another host) is an explicit choice; `METRICS_HOST` overrides it.'),
});

export const deliverySchema = z.strictObject({
  leaseMs: z.int().min(1_000).default(30_000).describe("Lock lease of a claimed operation; a provider call's deadline stays inside what is left of it."),
  // 25 calls with the default backoff span about 3 days (2.5 to 3.3 in nearly
  // every case, never more than 5.7): like Stripe's 3 days of webhook retries,
  // under Postfix's 5-day queue lifetime, inside the 7-day retention.
  attempts: positiveInt
    .default(25)
    .describe('Provider calls (ones that reached, or may have reached, the provider) before an operation is dead. Waiting at an open circuit breaker is not a call. With the default backoff, about 3 days: a weekend-long provider outage delays notifications instead of killing them.'),
  backoffMs: z
    .array(nonNegativeInt)
    .min(1, 'needs at least one delay')
    .default([1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000])
    .describe("Delay before retry n (the last value repeats), full jitter, capped by `backoffCapMs`, never below a provider's `Retry-After`."),
  backoffCapMs: nonNegativeInt.default(28_800_000).describe('Upper bound of any retry delay.'),
  concurrency: positiveInt
    .default(32)
    .describe('Provider calls at once per process (operations being claimed, sent and committed), whether they came in single or batch deliver jobs.'),
  batchMax: positiveInt
    .max(256)
    .default(16)
    .describe('Operations (same deliver partition, no document, from the decide jobs of one event-loop turn) carried by one `batch` deliver job; each is still claimed, sent and committed on its own. `1` turns batching off.'),
  inDoubtPolicy: z
    .enum(['resend', 'dead'])
    .default('resend')
    .describe('An in-doubt send on a provider that cannot be asked (no `lookupUrl`, or a native provider without lookup): `resend` accepts a possible second copy rather than a lost notification, `dead` parks it in the DLQ for a human.'),
  metricsPort: listenPort.default(9465).describe('Port of the health/metrics server; `METRICS_PORT` overrides it, `0` picks a free one.'),
  metricsHost: nonEmpty.default('127.0.0.1').describe('Address of the health/metrics server (see `decision.metricsHost`).'),
  providerAttempts: positiveInt
    .default(2)
    .describe('Calls to one provider within an operation (5xx, 429, or in doubt and then not found) before the channel falls back to its next provider.'),
  breaker: z
    .strictObject({
      failureThreshold: positiveInt.default(5).describe('Consecutive failures that open the breaker.'),
      cooldownMs: nonNegativeInt.default(30_000).describe('How long it stays open before one trial call goes through.'),
    })
    .prefault({})
    .describe('Circuit breaker per provider and process: a dead provider costs one fast skip.'),
  sweepIntervalMs: nonNegativeInt
    .default(10_000)
    .describe('How often the recovery sweeper (one active across processes) re-enqueues operations whose deliver job was lost; `0` turns it off.'),
  partitions: z
    .array(nonNegativeInt)
    .min(1)
    .optional()
    .describe('Queue partitions this process consumes (default: all of `redis.partitions`), to pin replicas to partitions.'),
});

export const limitsSchema = z.strictObject({
  perRecipient: rateLimitSchema
    .optional()
    .describe('Across all routes and channels, per recipient. Over the limit an operation ends `suppressed` (reason `rate_limit`).'),
});

export const retentionSchema = z.strictObject({
  days: z.number().positive().default(7).describe('How long dedup records and the journal are kept; longer than any source can redeliver.'),
});

export const schedulingSchema = z.strictObject({
  maxHorizonDays: z
    .number()
    .positive()
    .max(366)
    .default(30)
    .describe('How far ahead an event may be scheduled (`sendAt`, `delaySeconds`, a route\'s `delay`); past it ingest answers 400 SEND_AT_BEYOND_HORIZON. The records of a scheduled operation are kept for the retention period past its time.'),
});

export const webhooksSchema = z.strictObject({
  mailgun: z
    .strictObject({
      signingKey: z.string().min(1).optional().describe('Mailgun webhook signing key (or `signingKeyFile`).'),
      signingKeyFile: nonEmpty.optional().describe('A file holding the signing key.'),
      toleranceSeconds: positiveInt.default(300).describe('Accepted clock distance of the signed timestamp.'),
    })
    .superRefine((m, ctx) => {
      if (m.signingKey === undefined) ctx.addIssue({ code: 'custom', path: ['signingKey'], message: 'required: give signingKey or signingKeyFile' });
    })
    .optional()
    .describe('Mailgun signs `timestamp + token` with the webhook signing key (HMAC-SHA256); a replayed token is refused.'),
  postmark: z
    .strictObject({
      username: nonEmpty.describe('Basic auth user in the webhook URL.'),
      password: z.string().optional().describe('Basic auth password (or `passwordFile`).'),
      passwordFile: nonEmpty.optional().describe('A file holding the password.'),
    })
    .superRefine((m, ctx) => {
      if (m.password === undefined) ctx.addIssue({ code: 'custom', path: ['password'], message: 'required: give password or passwordFile' });
    })
    .optional()
    .describe('Postmark: basic auth credentials put in the inbound webhook URL.'),
  sendgrid: z
    .strictObject({
      username: nonEmpty.optional().describe('Basic auth user.'),
      password: z.string().optional().describe('Basic auth password (or `passwordFile`).'),
      passwordFile: nonEmpty.optional().describe('A file holding the password.'),
      token: z.string().min(1).optional().describe('Token expected as `?token=` in the URL (or `tokenFile`).'),
      tokenFile: nonEmpty.optional().describe('A file holding the token.'),
    })
    .superRefine((m, ctx) => {
      if (m.token === undefined && (m.username === undefined || m.password === undefined)) {
        ctx.addIssue({ code: 'custom', message: 'give a token (or tokenFile), or username and password' });
      }
    })
    .optional()
    .describe('SendGrid Inbound Parse has no signature: basic auth and/or `?token=` in the URL.'),
});

export const configSchema = z.strictObject({
  redis: redisSchema.prefault({}).describe('The Redis (or Redis Cluster) every process shares; nothing else coordinates them.'),
  log: logSchema.prefault({}).describe('pino JSON logs on stdout; secrets are redacted and message bodies are not logged.'),
  tracing: tracingSchema.prefault({}).describe('OpenTelemetry traces across ingest, decision, render and delivery (see tracing.md). Off by default.'),
  ingest: ingestSchema.prefault({}).describe('The ingest HTTP server: producer authentication, input limits and load shedding (see ingest-api.md and security.md).'),
  dashboard: dashboardSchema.prefault({}).describe('Bull Board and the admin API (see operations.md).'),
  decision: decisionSchema.prefault({}).describe('The decision workers: routes and fan-out.'),
  delivery: deliverySchema.prefault({}).describe('The delivery workers: claims, retries, fallback between providers, the recovery sweeper.'),
  routes: z
    .array(routeSchema)
    .default([])
    .describe('Routing rules. Not first-match: every route whose `match` matches applies (fan-out); routes that produce the same action, recipient and channel collapse into one operation.'),
  providers: providersSchema
    .default({})
    .describe('Channel name → ordered fallback list of providers. Delivery moves to the next provider only when the previous one certainly did not take the message (see providers.md).'),
  mailboxes: z.array(mailboxSchema).default([]).describe('Mailboxes whose mail is routed (see mail.md).'),
  tenancy: tenancySchema.prefault({}).describe('Many customers in one fleet: each tenant\'s share of the senders (see tenants.md).'),
  limits: limitsSchema.prefault({}).describe('Per-recipient limits across all routes.'),
  retention: retentionSchema.prefault({}).describe('How long records are kept.'),
  scheduling: schedulingSchema.prefault({}).describe('Send-at and delays (see scheduling.md).'),
  webhooks: webhooksSchema
    .prefault({})
    .describe('Provider inbound mail webhooks (`POST /v1/mail/inbound/<provider>`). A provider without an entry answers 404: no unauthenticated inbound endpoint is open by default.'),
  feedback: feedbackSchema
    .prefault({})
    .describe('Delivery feedback from providers (`POST /v1/feedback/<provider>`: bounces, complaints, deliveries; see feedback.md). A provider without an entry answers 404.'),
  unsubscribe: unsubscribeSchema
    .prefault({})
    .describe('One-click unsubscribe (RFC 8058) for email of routes with a `category` (see preferences.md). Off until `publicBaseUrl` is set.'),
  sources: sourcesSchema,
  documents: documentsSchema.prefault({}).describe('How documents are generated and kept (see templates-and-documents.md).'),
  /**
   * How long a stopping process may take to finish or release its in-flight
   * work (after SIGTERM, or when its supervisor goes away). Past it the process
   * logs what it abandons (`event: "shutdown_timeout"`) and exits 1: claims stay
   * fenced and their leases expire, so another worker takes them over. Below
   * Kubernetes' 30 s grace period by default, so the process leaves before SIGKILL.
   */
  shutdownTimeoutMs: positiveInt
    .default(20_000)
    .describe(
      'How long a stopping process may finish or release its in-flight work before it logs what it abandons (`event: "shutdown_timeout"`) and exits 1; abandoned claims stay fenced and are taken over when their leases expire. Below Kubernetes\' 30 s grace period.',
    ),
});

/** A validated config, with every default filled in. */
export type Config = z.output<typeof configSchema>;
/** What a config file or object may contain (defaults optional). */
export type ConfigInput = z.input<typeof configSchema>;
export type RedisConfig = Config['redis'];
export type LogConfig = Config['log'];
export type TracingConfig = Config['tracing'];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type IngestConfig = Config['ingest'];
export type ApiKeyConfig = IngestConfig['apiKeys'][number];
export type DashboardConfig = Config['dashboard'];
export type DecisionConfig = Config['decision'];
export type DeliveryConfig = Config['delivery'];
export type LimitsConfig = Config['limits'];
export type RetentionConfig = Config['retention'];
export type SchedulingConfig = Config['scheduling'];
