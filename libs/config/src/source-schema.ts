import { z } from 'zod';
import { identifier, nonEmpty, positiveInt, tenantId } from './primitives';

/**
 * `sources:` — where events are born (docs/sources.md). Each entry is read by
 * the relay app (apps/relay), which hands every message to the same
 * acceptance as ingest and acknowledges it to its origin only after that.
 */

/** `$` (the whole body) or `$.a.b.c`: a path of object keys into the message's JSON body. */
export const jsonPath = z
  .string()
  .regex(/^\$(\.[A-Za-z0-9_-]+)*$/, 'a JSON path: "$" or "$.key.key" (letters, digits, "_" and "-" in keys)')
  .describe('A JSON path into the message body: `$` is the whole body, `$.order.id` a nested key.');

/** Where a message's event id comes from; the consumer never invents one. */
export const eventIdSchema = z
  .discriminatedUnion('from', [
    z.strictObject({
      from: z.literal('json').describe('The event id is a string (or integer) at `path` in the JSON body.'),
      path: jsonPath.default('$.id').describe('Where the id is in the body.'),
    }),
    z.strictObject({
      from: z.literal('header').describe('The event id is a message header (RabbitMQ, NATS and Kafka headers).'),
      name: nonEmpty.describe('The header name.'),
    }),
    z.strictObject({
      from: z.literal('property').describe('The event id is an AMQP property (RabbitMQ only).'),
      name: z.enum(['messageId', 'correlationId']).default('messageId').describe('The AMQP property.'),
    }),
    z.strictObject({
      from: z.literal('field').describe('The event id is a field of the stream entry (Redis Streams only).'),
      name: nonEmpty.describe('The entry field.'),
    }),
    z.strictObject({
      from: z.literal('key').describe('The event id is the record key, as UTF-8 text (Kafka only).'),
    }),
  ])
  .describe('Where the event id comes from. A message without one is poison (`invalid_event`), never given an invented id.');

export const sourceMappingSchema = z
  .strictObject({
    type: jsonPath.optional().describe('Where the event type is in the body (default `$.type`), unless `typeValue` names it.'),
    typeValue: z.string().min(1).max(200).optional().describe('A fixed event type for every message of this source.'),
    recipients: jsonPath.default('$.recipients').describe('Where the recipients (an array of strings) are; absent means the routes choose.'),
    data: jsonPath.default('$.data').describe('Where the event data (an object) is; `$` takes the whole body.'),
  })
  .describe('How a message body becomes an event (type, recipients, data).');

const common = {
  name: identifier.describe('This source\'s name: its metric label, its log field, and the origin of its dead messages.'),
  source: z
    .string()
    .min(1)
    .max(200)
    .refine((s) => s !== 'mail', 'source "mail" is reserved for mail ingestion')
    .describe('The `source` of every event this source reads (what routes match on).'),
  id: eventIdSchema.prefault({ from: 'json' }),
  tenant: tenantId.optional().describe('The tenant every event this source reads belongs to (docs/tenants.md). Unset: the default tenant.'),
  mapping: sourceMappingSchema.prefault({}),
  concurrency: positiveInt.max(10_000).default(64).describe('Messages in acceptance at once (and the prefetch of brokers that have one).'),
};

export const redisStreamSourceSchema = z.strictObject({
  type: z.literal('redis-streams').describe('A Redis stream read through a consumer group.'),
  ...common,
  url: z.url({ protocol: /^rediss?$/, error: 'Invalid URL: expected redis:// or rediss://' }).describe('The Redis holding the stream (any Redis, not necessarily singleshot\'s).'),
  urlFile: nonEmpty.optional().describe('A file holding `url` (a Docker or Kubernetes secret), so the credentials in it stay out of the config file.'),
  stream: nonEmpty.describe('The stream key.'),
  group: nonEmpty.default('singleshot').describe('The consumer group (created at the start of the stream when missing).'),
  payloadField: nonEmpty.default('event').describe('The entry field whose value is the JSON body.'),
  claimIdleMs: positiveInt.default(30_000).describe('Entries left pending this long by another consumer (a dead relay) are claimed (`XAUTOCLAIM`).'),
});

export const postgresOutboxSourceSchema = z.strictObject({
  type: z.literal('postgres-outbox').describe('A transactional outbox table (libs/outbox) in PostgreSQL.'),
  name: common.name,
  tenant: common.tenant,
  url: z.url({ protocol: /^postgres(ql)?$/, error: 'Invalid URL: expected postgres://' }).describe('The PostgreSQL holding the outbox.'),
  urlFile: nonEmpty.optional().describe('A file holding `url` (a Docker or Kubernetes secret), so the credentials in it stay out of the config file.'),
  table: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/, 'a lower-case table name, optionally schema-qualified')
    .default('singleshot_outbox')
    .describe('The outbox table.'),
  channel: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'a lower-case identifier')
    .default('singleshot_outbox')
    .describe('The `LISTEN/NOTIFY` channel `enqueue` notifies.'),
  batchSize: positiveInt.max(10_000).default(100).describe('Rows claimed per transaction (`FOR UPDATE SKIP LOCKED`).'),
  pollIntervalMs: positiveInt.default(1_000).describe('Polling fallback when no notification comes.'),
});

export const rabbitmqSourceSchema = z.strictObject({
  type: z.literal('rabbitmq').describe('A RabbitMQ queue, acknowledged by hand after acceptance.'),
  ...common,
  url: z.url({ protocol: /^amqps?$/, error: 'Invalid URL: expected amqp:// or amqps://' }).describe('The broker.'),
  urlFile: nonEmpty.optional().describe('A file holding `url` (a Docker or Kubernetes secret), so the credentials in it stay out of the config file.'),
  queue: nonEmpty.describe('The queue to consume (declared by its owner, not by singleshot).'),
});

export const natsSourceSchema = z.strictObject({
  type: z.literal('nats').describe('A NATS JetStream stream through a durable pull consumer.'),
  ...common,
  servers: z.array(z.string().regex(/^(nats|tls):\/\/[^\s]+$/, 'expected nats://host:port')).min(1).describe('NATS servers.'),
  user: nonEmpty.optional().describe('User name, with `password` (or `passwordFile`).'),
  password: z.string().optional().describe('Password for `user` (or `passwordFile`).'),
  passwordFile: nonEmpty.optional().describe('A file holding the password.'),
  token: z.string().optional().describe('An authentication token (or `tokenFile`).'),
  tokenFile: nonEmpty.optional().describe('A file holding the token.'),
  stream: nonEmpty.describe('The JetStream stream.'),
  consumer: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "_" and "-"').default('singleshot').describe('The durable consumer (created when missing).'),
  filterSubject: nonEmpty.optional().describe('Only subjects matching this filter.'),
  ackWaitMs: positiveInt.optional().describe('The consumer\'s ack wait: default 30 s, and at least `ingest.enqueueTimeoutMs` plus 5 s; a relay that dies leaves its unacknowledged messages for this long.'),
});

/** `host:port`, the form Kafka clients take their bootstrap brokers in. */
const kafkaBroker = z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'expected host:port');

export const kafkaSourceSchema = z.strictObject({
  type: z.literal('kafka').describe('A Kafka topic read through a consumer group; offsets committed only past accepted records.'),
  ...common,
  brokers: z.array(kafkaBroker).min(1).describe('Bootstrap brokers, `host:port`.'),
  topic: nonEmpty.describe('The topic (created by its owner, not by singleshot).'),
  group: nonEmpty.default('singleshot').describe('The consumer group: every relay of this source joins it and they share the partitions.'),
  clientId: nonEmpty.default('singleshot-relay').describe('The client id the brokers see (quotas, logs).'),
  ssl: z.boolean().default(false).describe('TLS to the brokers (the system\'s CAs).'),
  sasl: z
    .strictObject({
      mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).describe('The SASL mechanism.'),
      username: nonEmpty.describe('The SASL user.'),
      password: z.string().optional().describe('Its password (or `passwordFile`).'),
      passwordFile: nonEmpty.optional().describe('A file holding the password.'),
    })
    .optional()
    .describe('SASL authentication; without it, none.'),
  sessionTimeoutMs: positiveInt.min(1_000).default(30_000).describe('A relay that stops heartbeating (killed, cut off) keeps its partitions this long before the group rebalances them to the others.'),
  heartbeatIntervalMs: positiveInt.default(3_000).describe('How often a relay heartbeats to the group coordinator, also while records are in acceptance; below `sessionTimeoutMs`.'),
});

export const sourceSchema = z
  .discriminatedUnion('type', [redisStreamSourceSchema, postgresOutboxSourceSchema, rabbitmqSourceSchema, natsSourceSchema, kafkaSourceSchema])
  .superRefine((s, ctx) => {
    if (s.type === 'nats') {
      if ((s.user === undefined) !== (s.password === undefined)) ctx.addIssue({ code: 'custom', path: [s.user === undefined ? 'user' : 'password'], message: 'give user and password together' });
      if (s.token !== undefined && s.user !== undefined) ctx.addIssue({ code: 'custom', path: ['token'], message: 'give a token or a user and password, not both' });
    }
    if (s.type === 'kafka') {
      if (s.heartbeatIntervalMs >= s.sessionTimeoutMs) ctx.addIssue({ code: 'custom', path: ['heartbeatIntervalMs'], message: 'must be below sessionTimeoutMs' });
      if (s.sasl && s.sasl.password === undefined) ctx.addIssue({ code: 'custom', path: ['sasl', 'password'], message: 'give password or passwordFile' });
    }
    if (s.type === 'postgres-outbox') return;
    const from = s.id.from;
    const allowed = { 'redis-streams': ['json', 'field'], rabbitmq: ['json', 'header', 'property'], nats: ['json', 'header'], kafka: ['json', 'header', 'key'] }[s.type];
    if (!allowed.includes(from)) ctx.addIssue({ code: 'custom', path: ['id', 'from'], message: `a ${s.type} source takes the id from ${allowed.join(' or ')}` });
    if (s.mapping.type !== undefined && s.mapping.typeValue !== undefined) ctx.addIssue({ code: 'custom', path: ['mapping', 'typeValue'], message: 'give type or typeValue, not both' });
  });

/** The `sources:` list: names are unique (they label metrics and dead records). */
export const sourcesSchema = z
  .array(sourceSchema)
  .default([])
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((s, i) => {
      if (seen.has(s.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate source name "${s.name}"` });
      seen.add(s.name);
    });
  })
  .describe('Where events are born: outboxes and brokers the relay app reads (see sources.md).');

export type SourceConfig = z.output<typeof sourceSchema>;
export type RedisStreamSourceConfig = z.output<typeof redisStreamSourceSchema>;
export type PostgresOutboxSourceConfig = z.output<typeof postgresOutboxSourceSchema>;
export type RabbitmqSourceConfig = z.output<typeof rabbitmqSourceSchema>;
export type NatsSourceConfig = z.output<typeof natsSourceSchema>;
export type KafkaSourceConfig = z.output<typeof kafkaSourceSchema>;
/** The parts of a broker source that turn a message into an event. */
export type SourceMapping = Pick<RedisStreamSourceConfig, 'source' | 'id' | 'mapping'>;
