import { z } from 'zod';
import { identifier, listenPort, nonEmpty, positiveInt, tenantId } from './primitives';

/**
 * One producer API key (`Authorization: Bearer <key>`). The key itself comes
 * from `key`, `keyFile` (read at load time) or `keyEnv` (an environment
 * variable, read at load time); it is never logged. Several entries may name
 * the same sources, so a key can be rotated without downtime.
 */
export const apiKeySchema = z
  .strictObject({
    name: identifier.min(1).max(64).describe('Shows up in metrics (`key` label) and logs instead of the key.'),
    key: z
      .string()
      .min(16, 'must be at least 16 characters (use e.g. `openssl rand -hex 32`)')
      .optional()
      .describe('The key itself, at least 16 characters (or `keyFile`, or `keyEnv`); never logged.'),
    keyFile: nonEmpty.optional().describe('A file holding the key, read at start.'),
    keyEnv: nonEmpty.optional().describe('Name of an environment variable holding the key, read at start.'),
    sources: z
      .array(nonEmpty)
      .min(1, 'name at least one source (or "*")')
      .describe('The event `source`s this key may post (`mail` for raw MIME); `"*"` allows every source.'),
    tenant: tenantId
      .optional()
      .describe(
        'The tenant this key posts for (docs/tenants.md): its events are that tenant\'s, and the key reads, cancels and replays only that tenant\'s messages and operations, in the admin API too. Unset: the default tenant, as a deployment without tenants.',
      ),
    rateLimit: z
      .strictObject({ perSecond: positiveInt.describe('Sustained requests per second.'), burst: positiveInt.describe('Bucket size.') })
      .optional()
      .describe('Overrides `ingest.rateLimit` for this key.'),
  })
  .superRefine((k, ctx) => {
    if (k.key === undefined) ctx.addIssue({ code: 'custom', path: ['key'], message: 'required: give key, keyFile or keyEnv' });
  });

export const ingestSchema = z.strictObject({
  port: listenPort.default(8080).describe('HTTP port; `PORT` overrides it, `0` picks a free one.'),
  host: nonEmpty
    .optional()
    .describe('Listen address. Unset: `0.0.0.0` when producer credentials (`apiKeys` or `signingSecrets`) are configured, else `127.0.0.1`. An address beyond loopback without credentials refuses to start (`INGEST_AUTH_REQUIRED`) unless `allowAnonymous`.'),
  maxBodyBytes: positiveInt.default(10_485_760).describe('Largest request body; `413 BODY_TOO_LARGE` beyond.'),
  maxJsonDepth: z
    .int()
    .min(2)
    .max(1_000)
    .default(64)
    .describe('Deepest nesting of objects and arrays accepted in a JSON body (`400 INVALID_EVENT` beyond).'),
  signingSecrets: z
    .array(nonEmpty)
    .default([])
    .describe('HMAC secrets accepted for `X-Singleshot-Signature`; several allow rotation. Empty = signing off.'),
  signingSecretsFile: nonEmpty.optional().describe('A file with one signing secret per line.'),
  apiKeys: z
    .array(apiKeySchema)
    .default([])
    .describe('Producer API keys (`Authorization: Bearer <key>`). Several entries may name the same sources, so a key can be rotated without downtime.'),
  allowAnonymous: z
    .boolean()
    .default(false)
    .describe('Accept unauthenticated producers on a non-loopback host. Off: such a host refuses to start (`INGEST_AUTH_REQUIRED`).'),
  enqueueTimeoutMs: positiveInt.default(5_000).describe('How long a request waits for its decide job to reach Redis before answering 503.'),
  headersTimeoutMs: positiveInt.default(10_000).describe('A client must send its whole request header within this time (slowloris); `408` beyond.'),
  requestTimeoutMs: positiveInt.default(60_000).describe('A client must send its whole request (header and body) within this time.'),
  keepAliveTimeoutMs: positiveInt
    .default(65_000)
    .describe("An idle keep-alive connection is closed after this time (above a load balancer's 60 s idle timeout)."),
  maxConnections: positiveInt.default(10_000).describe('Open connections beyond this are refused at once (each holds a file descriptor).'),
  maxRequestsInFlight: positiveInt
    .default(1_000)
    .describe('Requests being processed at once; beyond it the answer is `503 OVERLOADED` with `Retry-After` (load shedding).'),
  rateLimit: z
    .strictObject({ perSecond: positiveInt.describe('Sustained requests per second.'), burst: positiveInt.describe('Bucket size.') })
    .prefault({ perSecond: 1_000, burst: 2_000 })
    .describe('Token bucket per producer key (or per anonymous/HMAC caller) and process: `429 RATE_LIMITED` with `Retry-After` beyond.'),
});
