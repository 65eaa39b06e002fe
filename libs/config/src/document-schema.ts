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
  name: identifier.describe("The document's name, part of its key."),
  template: nonEmpty.describe("A Handlebars file (relative to the config file) whose output is the document's line markup (`# title`, `| table | row |`, …)."),
  format: z.literal('pdf').default('pdf').describe('Output format.'),
  version: z
    .string()
    .regex(/^v[0-9]{1,6}$/, 'expected vN (e.g. v1)')
    .default('v1')
    .describe('Bump it to generate the document again under changed logic.'),
  fileName: nonEmpty.optional().describe("A template for the attachment's file name; default `<name>.pdf`."),
  title: nonEmpty.optional().describe("The PDF's title (a template); default: the file name."),
});

const fsStoreSchema = z
  .strictObject({
    type: z.literal('fs').describe('A directory on local disk: one host, or apps sharing the directory.'),
    dir: nonEmpty.default('.singleshot/documents').describe("Where documents are written; relative paths start at the process's working directory."),
  })
  .describe('Documents in a directory: suits one host (`singleshot start`, or apps sharing the directory).');

const s3StoreSchema = z
  .strictObject({
    type: z.literal('s3').describe('Amazon S3 or an S3-compatible store (MinIO, Ceph).'),
    bucket: nonEmpty.describe('Bucket name.'),
    prefix: z
      .string()
      .regex(/^([A-Za-z0-9_.-]+\/)*$/, 'a key prefix ending in "/" (or empty)')
      .default('')
      .describe('Key prefix ending in `/` (or empty).'),
    region: nonEmpty.default('us-east-1').describe('Region.'),
    endpoint: z.url({ protocol: /^https?$/ }).optional().describe('An S3-compatible endpoint (MinIO, Ceph); none = AWS.'),
    forcePathStyle: z.boolean().optional().describe('Path-style addressing (most S3-compatible stores need it).'),
    accessKeyId: nonEmpty.optional().describe("Static credentials (with `secretAccessKey`); none = the AWS SDK's default chain."),
    secretAccessKey: z.string().optional().describe('Secret of `accessKeyId` (or `secretAccessKeyFile`).'),
    secretAccessKeyFile: nonEmpty.optional().describe('A file holding the secret access key.'),
    timeoutMs: positiveInt.default(30_000).describe('Upper bound of one store call.'),
  })
  .describe('Documents in S3: needed when the render, delivery and ingest apps run on different hosts or containers.');

/**
 * How documents are generated and kept. The render runs on its own queue
 * (`render`) and workers, so slow documents never hold up notifications that
 * need none.
 */
export const documentsSchema = z.strictObject({
  store: z
    .discriminatedUnion('type', [fsStoreSchema, s3StoreSchema])
    .prefault({ type: 'fs' })
    .describe('Where generated documents are kept.'),
  attempts: positiveInt.default(5).describe('Generation attempts before every dependent operation ends `dead` with `document_failed`.'),
  backoffMs: z
    .array(nonNegativeInt)
    .min(1, 'needs at least one delay')
    .default([2_000, 10_000, 60_000])
    .describe('Delay before generation retry n (the last value repeats), with jitter.'),
  backoffCapMs: nonNegativeInt.default(600_000).describe('Upper bound of any generation retry delay.'),
  leaseMs: z
    .int()
    .min(1_000)
    .default(60_000)
    .describe("Lock lease of one generation; a killed renderer's document is taken over after it. Keep it longer than the slowest generation."),
  concurrency: positiveInt.default(2).describe('Documents generated at once per process.'),
  waitPollMs: z
    .int()
    .min(100)
    .default(5_000)
    .describe('How often a delivery waiting for its document looks again (the render also wakes it when done).'),
  maxAttachmentBytes: nonNegativeInt
    .default(5 * 1024 * 1024)
    .describe('Email attachments up to this size; a larger document is sent as a time-limited signed link.'),
  links: z
    .strictObject({
      baseUrl: z
        .url({ protocol: /^https?$/ })
        .default('http://127.0.0.1:8080')
        .describe('Where `GET /v1/documents/…` is reachable for recipients (the ingest server).'),
      secret: z
        .string()
        .min(16, 'at least 16 characters')
        .optional()
        .describe('HMAC key of the links (or `secretFile`); none = one generated and kept in Redis, shared by every process.'),
      secretFile: nonEmpty.optional().describe('A file holding the link secret.'),
      ttlSeconds: positiveInt.default(7 * 86_400).describe('How long a link stays valid.'),
    })
    .prefault({})
    .describe('Signed links to documents (webhook payloads, and attachments past `maxAttachmentBytes`).'),
  metricsPort: z
    .int()
    .min(0)
    .max(65535)
    .default(9466)
    .describe('Health/metrics port of the render app run alone; `METRICS_PORT` overrides it.'),
  metricsHost: nonEmpty
    .default('127.0.0.1')
    .describe('Address of that server (loopback by default; `METRICS_HOST` overrides it, see `decision.metricsHost`).'),
});

export type RouteDocumentConfig = z.output<typeof routeDocumentSchema>;
export type DocumentsConfig = z.output<typeof documentsSchema>;
export type DocumentStoreConfig = DocumentsConfig['store'];
