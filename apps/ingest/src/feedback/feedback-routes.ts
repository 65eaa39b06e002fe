import type { ServerResponse } from 'node:http';
import type { FeedbackConfig } from '@singleshot/config';
import { describeError, type ErrorCode } from '@singleshot/core';
import { sendError, sendJson } from '@singleshot/http';
import { errorResponse, retryAfterHeader, type Metrics } from '@singleshot/observability';
import { FeedbackError, type FeedbackSource } from '@singleshot/providers';
import type { FeedbackStore, KeyBuilder, RedisClient } from '@singleshot/store';
import { rawRoute, type IngestRoute, type RouteDoc } from '../http/route';
import { mailgunReader, postmarkReader, sendgridReader, twilioReader, type PostReader } from './provider-posts';
import { FeedbackRecorder, type SuppressionSignal } from './recorder';
import { sesReader, type SesReaderDeps } from './ses-post';

/** pino-compatible subset. */
interface FeedbackLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface FeedbackRouteDeps {
  /** `config.feedback` with its secret files read. */
  config: FeedbackConfig;
  store: FeedbackStore;
  /** Mailgun token replay refusal (a fail-fast producer connection). */
  redis: Pick<RedisClient, 'set' | 'del'>;
  keys: Pick<KeyBuilder, 'webhookToken'>;
  metrics: Pick<Metrics, 'feedbackEvents'>;
  logger: FeedbackLogger;
  /** The suppression port: called for hard bounces, complaints and opt-outs (no-op when absent). */
  onSuppressionSignal?: SuppressionSignal;
  /** SNS certificate fetch and subscription confirmation (defaults: HTTPS GET). */
  sns?: Omit<SesReaderDeps, 'logger'>;
  bodyLimit?: number;
  now?: () => number;
}

const SOURCES: readonly FeedbackSource[] = ['ses', 'sendgrid', 'postmark', 'mailgun', 'twilio'];

/**
 * `POST /v1/feedback/<provider>` for SES (SNS), SendGrid, Postmark, Mailgun
 * and Twilio: authenticated by the provider's own scheme before anything is
 * read into the store (401 and nothing stored otherwise), then every event
 * recorded once per provider event id (docs/feedback.md). 200 once every
 * event is in Redis, unmatched ones included; 503 while Redis is away (the
 * provider retries). A provider without config answers 404.
 */
export function feedbackRoutes(deps: FeedbackRouteDeps): IngestRoute[] {
  const now = deps.now ?? Date.now;
  const recorder = new FeedbackRecorder(deps);
  const { config } = deps;
  const readers: Partial<Record<FeedbackSource, PostReader>> = {
    ...(config.ses ? { ses: sesReader(config.ses, { ...deps.sns, logger: deps.logger }) } : {}),
    ...(config.sendgrid ? { sendgrid: sendgridReader(config.sendgrid) } : {}),
    ...(config.postmark ? { postmark: postmarkReader(config.postmark) } : {}),
    ...(config.mailgun
      ? {
          mailgun: mailgunReader(
            config.mailgun,
            async (token, ttl) => (await deps.redis.set(deps.keys.webhookToken('mailgun-feedback', token), String(now()), 'EX', ttl, 'NX')) === 'OK',
            async (token) => void (await deps.redis.del(deps.keys.webhookToken('mailgun-feedback', token)).catch(() => 0)),
          ),
        }
      : {}),
    ...(config.twilio ? { twilio: twilioReader(config.twilio) } : {}),
  };

  const refuse = (res: ServerResponse, source: string, status: number, code: ErrorCode, message: string) => {
    deps.metrics.feedbackEvents.inc({ provider: source, type: 'none', result: 'refused' });
    sendError(res, status, code, message);
  };

  return SOURCES.map((source) =>
    rawRoute({
      method: 'POST',
      path: `/v1/feedback/${source}`,
      gate: 'shed',
      bodyLimit: deps.bodyLimit ?? 5 * 1024 * 1024,
      doc: feedbackDoc(source),
      handle: async (request, res) => {
        const read = readers[source];
        if (!read) return refuse(res, source, 404, 'PROVIDER_NOT_CONFIGURED', `feedback from ${source} is not configured (feedback.${source})`);
        let release: (() => Promise<void>) | undefined;
        try {
          const post = await read(request, now());
          release = post.release;
          const tally = await recorder.record(source, post.parsed);
          sendJson(res, 200, tally);
        } catch (err) {
          if (err instanceof FeedbackError) {
            deps.logger.warn({ event: 'feedback_refused', source, code: err.code, reason: err.message }, 'feedback webhook refused');
            if (err.status === 503) res.setHeader('retry-after', '30');
            return refuse(res, source, err.status, err.code, err.message);
          }
          // Not recorded: free the token so the provider's retry of this very post is not a replay.
          await release?.();
          deps.logger.warn({ event: 'feedback_store_unavailable', source, err: describeError(err) }, 'feedback not recorded: Redis unavailable');
          res.setHeader('retry-after', '30');
          return refuse(res, source, 503, 'STORE_UNAVAILABLE', 'the feedback could not be recorded; retry later');
        }
      },
    }),
  );
}

const AUTH: Record<FeedbackSource, string> = {
  ses: 'the SNS message signature (SignatureVersion 1 or 2) with the certificate of its https SNS `SigningCertURL`',
  sendgrid: 'the Signed Event Webhook: `X-Twilio-Email-Event-Webhook-Signature` (ECDSA P-256) over `X-Twilio-Email-Event-Webhook-Timestamp` + body',
  postmark: 'HTTP basic auth (`feedback.postmark`)',
  mailgun: 'the `signature` block: HMAC-SHA256 of timestamp + token with the webhook signing key; each token once',
  twilio: '`X-Twilio-Signature`: HMAC-SHA1 of `feedback.twilio.publicUrl` with this query + the sorted form fields',
};

function feedbackDoc(source: FeedbackSource): RouteDoc {
  const form = source === 'twilio';
  return {
    tags: ['feedback'],
    summary: `Delivery feedback from ${source}, authenticated by ${AUTH[source]}`,
    security: [{}],
    ...(form ? { parameters: [{ name: 'op', in: 'query', schema: { type: 'string', pattern: '^[0-9a-f]{64}$' }, description: 'The operation key the provider put on the status callback URL' }] } : {}),
    requestBody: {
      required: true,
      content: form
        ? { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } }
        : { 'application/json': { schema: { type: source === 'sendgrid' ? 'array' : 'object' } }, ...(source === 'ses' ? { 'text/plain': { schema: { type: 'string' } } } : {}) },
    },
    responses: {
      '200': {
        description: 'Every event of the post is recorded (or was already, or matches no operation, or is not a delivery outcome)',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['recorded', 'duplicate', 'unmatched', 'ignored'],
              properties: { recorded: { type: 'integer' }, duplicate: { type: 'integer' }, unmatched: { type: 'integer' }, ignored: { type: 'integer' } },
            },
          },
        },
      },
      '400': errorResponse('The authenticated post is not what the provider documents (code `INVALID_PAYLOAD`, `UNTRUSTED_SUBSCRIBE_URL`)'),
      '401': errorResponse('The provider\'s authentication failed (`BAD_SIGNATURE`, `UNAUTHORIZED`, `STALE_TIMESTAMP`, `REPLAYED_TOKEN`, `UNTRUSTED_CERTIFICATE_URL`, `UNKNOWN_TOPIC`); nothing was recorded'),
      '404': errorResponse('This provider\'s feedback is not configured (code `PROVIDER_NOT_CONFIGURED`)'),
      '413': errorResponse('The body exceeds the limit (code `BODY_TOO_LARGE`)'),
      '500': errorResponse('Internal error; nothing was confirmed, the provider retries'),
      '503': errorResponse('Redis did not confirm the events, or the SNS certificate or subscription could not be fetched; the provider retries', retryAfterHeader),
    },
  };
}
