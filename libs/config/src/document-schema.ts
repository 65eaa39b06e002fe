import { z } from 'zod';
import { identifier, nonEmpty, nonNegativeInt, positiveInt } from './primitives';

/**
 * A document a route's notifications need (e.g. a purchase order as a PDF).
 * It is generated once per (message key, document name, version) and attached
 * to every recipient's email (a link on webhooks); no notification of the
 * route is sent before it exists.
 *
 * - `template`: a Handlebars file (path relative to the config file) whose
 *   output is the document's line markup (`# title`, `| table | row |`, …);
 * - `fileName`: a template for the attachment's file name;
 * - `version`: bump it to generate the document again under changed logic.
 */
export const routeDocumentSchema = z.strictObject({
  name: identifier,
  template: nonEmpty,
  format: z.literal('pdf').default('pdf'),
  version: z.string().regex(/^v[0-9]{1,6}$/, 'expected vN (e.g. v1)').default('v1'),
  fileName: nonEmpty.optional(),
  /** The PDF's title (a template); default: the file name. */
  title: nonEmpty.optional(),
});

const fsStoreSchema = z.strictObject({
  type: z.literal('fs'),
  /** Relative paths start at the process's working directory. */
  dir: nonEmpty.default('.singleshot/documents'),
});

const s3StoreSchema = z.strictObject({
  type: z.literal('s3'),
  bucket: nonEmpty,
  prefix: z.string().regex(/^([A-Za-z0-9_.-]+\/)*$/, 'a key prefix ending in "/" (or empty)').default(''),
  region: nonEmpty.default('us-east-1'),
  /** An S3-compatible endpoint (MinIO, Ceph); none = AWS. */
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  forcePathStyle: z.boolean().optional(),
  /** Static credentials (or `secretAccessKeyFile`); none = the AWS SDK's default chain. */
  accessKeyId: nonEmpty.optional(),
  secretAccessKey: z.string().optional(),
  secretAccessKeyFile: nonEmpty.optional(),
  timeoutMs: positiveInt.default(30_000),
});

/**
 * How documents are generated and kept. The render runs on its own queue
 * (`render`) and workers, so slow documents never hold up notifications that
 * need none.
 */
export const documentsSchema = z.strictObject({
  store: z.discriminatedUnion('type', [fsStoreSchema, s3StoreSchema]).prefault({ type: 'fs' }),
  /** Generation attempts before every dependent operation ends `dead` with `document_failed`. */
  attempts: positiveInt.default(5),
  /** Delay before generation retry n (the last value repeats), with jitter. */
  backoffMs: z.array(nonNegativeInt).min(1, 'needs at least one delay').default([2_000, 10_000, 60_000]),
  backoffCapMs: nonNegativeInt.default(600_000),
  /** Lock lease of one generation; a killed renderer's document is taken over after it. Keep it longer than the slowest generation. */
  leaseMs: z.int().min(1_000).default(60_000),
  concurrency: positiveInt.default(2),
  /** How often a delivery waiting for its document looks again (the render also wakes it when done). */
  waitPollMs: z.int().min(100).default(5_000),
  /** Email attachments up to this size; a larger document is sent as a time-limited link. */
  maxAttachmentBytes: nonNegativeInt.default(5 * 1024 * 1024),
  links: z
    .strictObject({
      /** Where `GET /v1/documents/…` is reachable for recipients (the ingest server). */
      baseUrl: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8080'),
      /** HMAC key of the links; none = one generated and kept in Redis, shared by every process. */
      secret: z.string().min(16, 'at least 16 characters').optional(),
      secretFile: nonEmpty.optional(),
      ttlSeconds: positiveInt.default(7 * 86_400),
    })
    .prefault({}),
  /** Health/metrics port of the render app run alone; `METRICS_PORT` overrides it. */
  metricsPort: z.int().min(0).max(65535).default(9466),
  /** Address of that server (loopback by default; `METRICS_HOST` overrides it, see `decision.metricsHost`). */
  metricsHost: nonEmpty.default('127.0.0.1'),
});

export type RouteDocumentConfig = z.output<typeof routeDocumentSchema>;
export type DocumentsConfig = z.output<typeof documentsSchema>;
export type DocumentStoreConfig = DocumentsConfig['store'];
