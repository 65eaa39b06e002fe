import { z } from 'zod';
import { mailboxSchema } from './mailbox-schema';
import { listenPort, nonEmpty, nonNegativeInt, positiveInt, rateLimitSchema } from './primitives';
import { ingestSchema } from './ingest-schema';
import { providersSchema } from './provider-schema';
import { routeSchema } from './route-schema';
import { documentsSchema } from './document-schema';

/**
 * The config file (docs/contract.md "Config file"). Every section is optional and
 * filled with defaults; unknown keys are errors. Secrets (`password`, `token`,
 * `signingSecrets`) may instead be given as `<key>File`, read at load time.
 * Cross-field rules (a route's channel has providers, names are unique) live
 * in cross-checks.ts so they are reported even when other fields are invalid.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const redisSchema = z.strictObject({
  /** `redis://` or `rediss://` (TLS). `REDIS_URL` overrides it. */
  url: z.url({ protocol: /^rediss?$/, error: 'Invalid URL: expected redis:// or rediss://' }).default('redis://127.0.0.1:6379'),
  password: z.string().optional(),
  passwordFile: nonEmpty.optional(),
  /** TLS options; present (even `{}`) enables TLS. */
  tls: z
    .strictObject({
      rejectUnauthorized: z.boolean().default(true),
      /** PEM of the CA to trust (or `caFile`). */
      ca: z.string().optional(),
      caFile: nonEmpty.optional(),
    })
    .optional(),
  /** Prefix of every key, so several deployments can share one Redis. */
  keyPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'may contain only letters, digits, "_", "." and "-"')
    .default('ss'),
  /** Number of operation shards (hash tags). Changing it re-homes keys: set it once. */
  shards: z.int().min(1).max(1024).default(16),
  /** Check `maxmemory-policy noeviction` and AOF at start (on every master), and warn when they are off. */
  checkOnStart: z.boolean().default(true),
  /**
   * A Redis Cluster instead of `url` (`REDIS_CLUSTER_NODES=host:port,…` sets
   * `nodes`). `password` and `tls` apply to every node.
   */
  cluster: z
    .strictObject({
      /** Seed nodes; the client discovers the rest. */
      nodes: z.array(z.string().regex(/^\[?[^\s\]]+\]?:\d{1,5}$/, 'expected host:port')).min(1, 'needs at least one host:port'),
      /** Announced `host:port` → reachable address, for a cluster behind NAT or in containers. */
      natMap: z.record(z.string(), z.strictObject({ host: nonEmpty, port: listenPort })).optional(),
      /** Replicas that must acknowledge an acceptance and a fenced commit (Redis `WAIT`) first; 0 = do not wait. */
      waitReplicas: nonNegativeInt.default(1),
      /** How long `WAIT` may take; past it ingest answers 503 and a commit is retried. */
      waitTimeoutMs: positiveInt.default(1_000),
    })
    .optional(),
  /**
   * Queue partitions: each of the decide and deliver queues is split into this
   * many BullMQ queues with their own hash tag. Default 1 on a single Redis, 16
   * on a cluster. See README "Beyond one Redis" before changing it on a live system.
   */
  partitions: z.int().min(1).max(1024).optional(),
  /**
   * While changing `partitions`: the former count. Workers keep consuming the
   * former layout's queues (producers no longer write there) until you drop this.
   */
  formerPartitions: z.int().min(1).max(1024).optional(),
});

export const logSchema = z.strictObject({
  level: z.enum(LOG_LEVELS).default('info'),
});

export const dashboardSchema = z.strictObject({
  port: listenPort.default(3000),
  /** Loopback by default: the dashboard can replay dead operations. */
  host: nonEmpty.default('127.0.0.1'),
  /** Basic auth (`username` + `password`) and/or a bearer `token`. */
  auth: z
    .strictObject({
      username: nonEmpty.optional(),
      password: z.string().optional(),
      passwordFile: nonEmpty.optional(),
      token: z.string().optional(),
      tokenFile: nonEmpty.optional(),
    })
    .superRefine((auth, ctx) => {
      if (auth.username !== undefined && auth.password === undefined) {
        ctx.addIssue({ code: 'custom', path: ['password'], message: 'username needs a password or passwordFile' });
      }
      if (auth.password !== undefined && auth.username === undefined) {
        ctx.addIssue({ code: 'custom', path: ['username'], message: 'password needs a username' });
      }
    })
    .optional(),
  /**
   * Loopback only: serve without any credentials (not even the generated
   * token). Refused on any other host.
   */
  allowAnonymous: z.boolean().default(false),
  /** Where the generated login token is written when no credentials are configured (mode 0600). */
  tokenPath: nonEmpty.default('.singleshot/dashboard-token'),
  /**
   * Origins (besides the dashboard's own, from the `Host` header) allowed to
   * make state-changing requests, e.g. `https://ops.example.com` behind a proxy.
   */
  allowedOrigins: z.array(z.url()).default([]),
});

export const decisionSchema = z.strictObject({
  concurrency: positiveInt.default(16),
  /** Health/metrics server port; `METRICS_PORT` overrides it, `0` picks a free one. */
  metricsPort: listenPort.default(9464),
  /**
   * Address of the health/metrics server. Loopback by default: `/metrics` is
   * unauthenticated, so opening it (`0.0.0.0` for a Prometheus on another host
   * or pod) is an explicit choice; `METRICS_HOST` overrides it.
   */
  metricsHost: nonEmpty.default('127.0.0.1'),
});

export const deliverySchema = z.strictObject({
  /** Lock lease; a provider call's deadline stays below what remains of it. */
  leaseMs: z.int().min(1_000).default(30_000),
  /**
   * Provider calls (ones that reached, or may have reached, the provider) before
   * an operation is dead. Waiting at an open circuit breaker is not a call. With
   * the default backoff (full jitter), 25 calls span about 3 days (the retry
   * horizon; 2.5 to 3.3 days in nearly every case, never more than 5.7): like
   * Stripe's 3 days of webhook retries, under Postfix's 5-day queue lifetime,
   * inside the 7-day retention, so a weekend-long provider outage delays
   * notifications instead of killing them.
   */
  attempts: positiveInt.default(25),
  /** Delay before retry n (the last value repeats), with jitter, capped by `backoffCapMs`. */
  backoffMs: z
    .array(nonNegativeInt)
    .min(1, 'needs at least one delay')
    .default([1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000]),
  backoffCapMs: nonNegativeInt.default(28_800_000),
  /**
   * Provider calls at once per process (operations being claimed, sent and
   * committed), whether they came in single `deliver` jobs or in batches: one
   * process-wide limit around every operation (apps/delivery/src/call-limit.ts).
   */
  concurrency: positiveInt.default(32),
  /**
   * Operations (same deliver partition, no document; of the decide jobs that
   * ran in one event-loop turn) carried by one `batch` deliver job, at most
   * this many per job; 1 turns batching off
   * (one job per operation). Each operation is still claimed and committed on its own.
   */
  batchMax: positiveInt.max(256).default(16),
  /**
   * An in-doubt send on a provider without `lookupUrl` cannot be reconciled:
   * `resend` accepts a possible duplicate rather than a lost notification,
   * `dead` parks it in the DLQ for a human.
   */
  inDoubtPolicy: z.enum(['resend', 'dead']).default('resend'),
  metricsPort: listenPort.default(9465),
  /** Address of the health/metrics server (see `decision.metricsHost`). */
  metricsHost: nonEmpty.default('127.0.0.1'),
  /** Calls to one provider within an operation (5xx, 429, in doubt and then not found) before the channel falls back to its next provider. */
  providerAttempts: positiveInt.default(2),
  /** Circuit breaker per provider and process: opens after `failureThreshold` consecutive failures, lets one trial through after `cooldownMs`. */
  breaker: z.strictObject({ failureThreshold: positiveInt.default(5), cooldownMs: nonNegativeInt.default(30_000) }).prefault({}),
  /** How often the recovery sweeper (one active across processes) re-enqueues operations whose deliver job was lost; 0 turns it off. */
  sweepIntervalMs: nonNegativeInt.default(10_000),
  /** Queue partitions this process consumes (default: all of `redis.partitions`), to pin replicas to partitions. */
  partitions: z.array(nonNegativeInt).min(1).optional(),
});

export const limitsSchema = z.strictObject({
  /** Across all routes and channels, per recipient. Over the limit → `suppressed` (reason `rate_limit`). */
  perRecipient: rateLimitSchema.optional(),
});

export const retentionSchema = z.strictObject({
  /** How long dedup records and the journal are kept; longer than any source can redeliver. */
  days: z.number().positive().default(7),
});

/**
 * Provider inbound mail webhooks (`POST /v1/mail/inbound/<provider>`). A
 * provider without an entry answers 404: no unauthenticated inbound endpoint is
 * ever open by default.
 */
export const webhooksSchema = z.strictObject({
  /** Mailgun signs `timestamp + token` with the webhook signing key (HMAC-SHA256). */
  mailgun: z
    .strictObject({
      signingKey: z.string().min(1).optional(),
      signingKeyFile: nonEmpty.optional(),
      /** Accepted clock distance of the signed timestamp. */
      toleranceSeconds: positiveInt.default(300),
    })
    .superRefine((m, ctx) => {
      if (m.signingKey === undefined) ctx.addIssue({ code: 'custom', path: ['signingKey'], message: 'required: give signingKey or signingKeyFile' });
    })
    .optional(),
  /** Postmark: basic auth credentials put in the inbound webhook URL. */
  postmark: z
    .strictObject({ username: nonEmpty, password: z.string().optional(), passwordFile: nonEmpty.optional() })
    .superRefine((m, ctx) => {
      if (m.password === undefined) ctx.addIssue({ code: 'custom', path: ['password'], message: 'required: give password or passwordFile' });
    })
    .optional(),
  /** SendGrid Inbound Parse has no signature: basic auth and/or `?token=` in the URL. */
  sendgrid: z
    .strictObject({
      username: nonEmpty.optional(),
      password: z.string().optional(),
      passwordFile: nonEmpty.optional(),
      token: z.string().min(1).optional(),
      tokenFile: nonEmpty.optional(),
    })
    .superRefine((m, ctx) => {
      if (m.token === undefined && (m.username === undefined || m.password === undefined)) {
        ctx.addIssue({ code: 'custom', message: 'give a token (or tokenFile), or username and password' });
      }
    })
    .optional(),
});

export const configSchema = z.strictObject({
  redis: redisSchema.prefault({}),
  log: logSchema.prefault({}),
  ingest: ingestSchema.prefault({}),
  dashboard: dashboardSchema.prefault({}),
  decision: decisionSchema.prefault({}),
  delivery: deliverySchema.prefault({}),
  /** All matching routes apply (fan-out), see routeSchema. */
  routes: z.array(routeSchema).default([]),
  providers: providersSchema.default({}),
  mailboxes: z.array(mailboxSchema).default([]),
  limits: limitsSchema.prefault({}),
  retention: retentionSchema.prefault({}),
  webhooks: webhooksSchema.prefault({}),
  documents: documentsSchema.prefault({}),
});

/** A validated config, with every default filled in. */
export type Config = z.output<typeof configSchema>;
/** What a config file or object may contain (defaults optional). */
export type ConfigInput = z.input<typeof configSchema>;
export type RedisConfig = Config['redis'];
export type LogConfig = Config['log'];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type IngestConfig = Config['ingest'];
export type ApiKeyConfig = IngestConfig['apiKeys'][number];
export type DashboardConfig = Config['dashboard'];
export type DecisionConfig = Config['decision'];
export type DeliveryConfig = Config['delivery'];
export type LimitsConfig = Config['limits'];
export type RetentionConfig = Config['retention'];
