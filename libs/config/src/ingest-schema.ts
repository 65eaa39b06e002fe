import { z } from 'zod';
import { identifier, listenPort, nonEmpty, positiveInt } from './primitives';

/**
 * One producer API key (`Authorization: Bearer <key>`). The key itself comes
 * from `key`, `keyFile` (read at load time) or `keyEnv` (an environment
 * variable, read at load time); it is never logged. Several entries may name
 * the same sources, so a key can be rotated without downtime.
 */
export const apiKeySchema = z
  .strictObject({
    /** Shows up in metrics (`key` label) and logs instead of the key. */
    name: identifier.min(1).max(64),
    key: z.string().min(16, 'must be at least 16 characters (use e.g. `openssl rand -hex 32`)').optional(),
    keyFile: nonEmpty.optional(),
    /** Name of an environment variable holding the key. */
    keyEnv: nonEmpty.optional(),
    /** The event `source`s this key may post (`mail` for raw MIME); `"*"` allows every source. */
    sources: z.array(nonEmpty).min(1, 'name at least one source (or "*")'),
    /** Overrides `ingest.rateLimit` for this key. */
    rateLimit: z.strictObject({ perSecond: positiveInt, burst: positiveInt }).optional(),
  })
  .superRefine((k, ctx) => {
    if (k.key === undefined) ctx.addIssue({ code: 'custom', path: ['key'], message: 'required: give key, keyFile or keyEnv' });
  });

export const ingestSchema = z.strictObject({
  port: listenPort.default(8080),
  /**
   * Listen address. Unset: `0.0.0.0` when producer credentials (apiKeys or
   * signingSecrets) are configured, else `127.0.0.1`. Any address beyond
   * loopback without credentials refuses to start unless `allowAnonymous`.
   */
  host: nonEmpty.optional(),
  maxBodyBytes: positiveInt.default(10_485_760),
  /** Deepest nesting of objects and arrays accepted in a JSON body (400 `INVALID_EVENT` beyond). */
  maxJsonDepth: z.int().min(2).max(1_000).default(64),
  /** HMAC secrets accepted for `X-Singleshot-Signature`; several allow rotation. Empty = signing off. */
  signingSecrets: z.array(nonEmpty).default([]),
  /** A file with one secret per line. */
  signingSecretsFile: nonEmpty.optional(),
  /** Producer API keys; see apiKeySchema. */
  apiKeys: z.array(apiKeySchema).default([]),
  /** Accept unauthenticated producers on a non-loopback host. Off: such a host refuses to start (`INGEST_AUTH_REQUIRED`). */
  allowAnonymous: z.boolean().default(false),
  /** How long a request waits for its decide job to reach Redis before answering 503. */
  enqueueTimeoutMs: positiveInt.default(5_000),
  /** A client must send its whole request header within this time (slowloris). */
  headersTimeoutMs: positiveInt.default(10_000),
  /** A client must send its whole request (header and body) within this time. */
  requestTimeoutMs: positiveInt.default(60_000),
  /** An idle keep-alive connection is closed after this time (above a load balancer's 60 s idle timeout). */
  keepAliveTimeoutMs: positiveInt.default(65_000),
  /** Open connections beyond this are refused at once (each holds a file descriptor). */
  maxConnections: positiveInt.default(10_000),
  /** Requests being processed at once; beyond it the answer is 503 with `Retry-After` (load shedding). */
  maxRequestsInFlight: positiveInt.default(1_000),
  /** Token bucket per producer key (or per anonymous/HMAC caller), per process: 429 with `Retry-After` beyond. */
  rateLimit: z.strictObject({ perSecond: positiveInt, burst: positiveInt }).prefault({ perSecond: 1_000, burst: 2_000 }),
});
