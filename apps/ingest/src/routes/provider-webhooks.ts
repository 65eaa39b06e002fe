import type { ServerResponse } from 'node:http';
import type { RedisClient } from '@singleshot/store';
import { mailInputFromParts, parseRawMail, type ParsedMail } from '@singleshot/mail';
import {
  PROVIDER_STATUS,
  WebhookError,
  isInboundProvider,
  mailgunInbound,
  postmarkInbound,
  sendgridInbound,
  verifyMailgun,
  verifyPostmark,
  verifySendgrid,
  type InboundProviderName,
  type MailgunOptions,
  type PostmarkOptions,
  type SendgridOptions,
  type WebhookMail,
  type WebhookRequest,
} from '@singleshot/mail';
import type { KeyBuilder } from '@singleshot/store';
import { PermanentError, ValidationError, describeError, type ErrorCode } from '@singleshot/core';
import { sendError, sendJson, type BodyReadError } from '@singleshot/http';
import { errorResponse, retryAfterHeader } from '@singleshot/observability';
import { StoreUnavailableError } from '@singleshot/intake';
import { rawRoute, type IngestRoute, type RouteDoc, type RouteRequest } from '../http/route';
import { accepted, intakeErrors, mailboxParameter } from '../openapi-parts';

/** pino-compatible subset. */
interface RouteLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ProviderWebhookDeps {
  mailboxes: ReadonlyArray<{ id: string; owner: string }>;
  /** A provider without config answers 404: an unauthenticated inbound endpoint is never on by default. */
  webhooks: {
    mailgun?: Omit<MailgunOptions, 'now'>;
    postmark?: PostmarkOptions;
    sendgrid?: SendgridOptions;
  };
  /** Resolves once the decide job is in Redis; throws StoreUnavailableError when Redis is down. */
  acceptMail(parsed: ParsedMail, via: string): Promise<{ messageKey: string; status: 'accepted' | 'duplicate' }>;
  /** For replay refusal (Mailgun tokens); a fail-fast producer connection. */
  redis: Pick<RedisClient, 'set' | 'del'>;
  keys: Pick<KeyBuilder, 'webhookToken'>;
  logger: RouteLogger;
  /** Body limit; default 26 MiB (Mailgun and Postmark accept mails up to 25 MB, plus encoding). */
  maxBodyBytes?: number;
  /** Raw mails larger than this are summarized from their header block (parseRawMail). */
  maxMailBytes?: number;
  /** Called for every refused request (for an `events_received{result="invalid"}` counter). */
  onRefused?(provider: string, code: string): void;
  /** Clock in ms (tests). */
  now?: () => number;
}

function toWebhookRequest({ req, query: parsed, body }: RouteRequest<Buffer>): WebhookRequest {
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') query[k] = v;
  return { rawBody: body, headers: req.headers, query, contentType: req.headers['content-type'] ?? '' };
}

/**
 * `POST /v1/mail/inbound/:provider?mailbox=ID` for Mailgun, Postmark and
 * SendGrid inbound mail (also `/:provider/:mailbox`, and for Mailgun's raw
 * MIME routes, whose URL must end in "mime", `/mailgun/:mailbox/mime`).
 *
 * Order: provider known and configured (404) → caller authenticated (401,
 * before a mailbox id is revealed) → Mailgun token claimed once (401 on
 * replay) → mailbox known (the provider's never-retry status) → the mail
 * taken apart by the adapter → keyed by the same code as the raw MIME path →
 * accepted (202) only once the decide job is in Redis, else the provider's
 * retry status.
 */
export function providerWebhookRoutes(deps: ProviderWebhookDeps): IngestRoute[] {
  const mailboxIds = new Set(deps.mailboxes.map((m) => m.id));
  const now = deps.now ?? Date.now;
  const bodyLimit = deps.maxBodyBytes ?? 26 * 1024 * 1024;

  const refuse = (res: ServerResponse, provider: string, status: number, code: ErrorCode, message: string, details?: unknown) => {
    deps.onRefused?.(provider, code);
    sendError(res, status, code, message, details);
  };

  /**
   * Claims a signature token once (SET NX: check and write in one step);
   * false when it was seen within its window. Any failure of this Redis call
   * means the token store is unavailable: the provider must retry.
   */
  const claimToken = async (provider: InboundProviderName, token: string, ttlSeconds: number): Promise<boolean> => {
    try {
      return (await deps.redis.set(deps.keys.webhookToken(provider, token), String(now()), 'EX', ttlSeconds, 'NX')) === 'OK';
    } catch (err) {
      throw new StoreUnavailableError('Redis is unavailable (webhook token check)', { cause: err });
    }
  };

  const handle = async (request: RouteRequest<Buffer>, res: ServerResponse, providerName: string): Promise<void> => {
    const provider = providerName;
    if (!isInboundProvider(provider)) return refuse(res, provider, 404, 'UNKNOWN_PROVIDER', `no inbound format "${provider}"`);
    const config = deps.webhooks[provider];
    if (!config) return refuse(res, provider, 404, 'PROVIDER_NOT_CONFIGURED', `inbound ${provider} is not configured`);
    const status = PROVIDER_STATUS[provider];
    const wreq = toWebhookRequest(request);
    const mailboxId = String(request.params.mailbox ?? wreq.query.mailbox ?? '');
    let claimed: string | undefined;

    try {
      let adapt: (r: WebhookRequest, o: { mailboxId: string }) => Promise<WebhookMail>;
      if (provider === 'mailgun') {
        const mg = config as MailgunOptions;
        const { token } = verifyMailgun(wreq, { ...mg, now });
        // Kept past the window in both directions: an older token is refused by its timestamp anyway.
        const ttl = 2 * (mg.toleranceSeconds ?? 300) + 60;
        if (!(await claimToken(provider, token, ttl))) throw new WebhookError('REPLAYED_TOKEN', 'this signature token was already used');
        claimed = token;
        adapt = mailgunInbound;
      } else if (provider === 'postmark') {
        verifyPostmark(wreq, config as PostmarkOptions);
        adapt = postmarkInbound;
      } else {
        verifySendgrid(wreq, config as SendgridOptions);
        adapt = sendgridInbound;
      }

      if (!mailboxId) return refuse(res, provider, status.reject, 'MISSING_MAILBOX', 'the mailbox query parameter is required (?mailbox=ID)');
      if (!mailboxIds.has(mailboxId)) return refuse(res, provider, status.reject, 'UNKNOWN_MAILBOX', `mailbox "${mailboxId}" is not configured`);

      const mail = await adapt(wreq, { mailboxId });
      const parsed =
        mail.kind === 'raw' ? await parseRawMail(mail.raw, { mailboxId, maxBytes: deps.maxMailBytes }) : mailInputFromParts(mail.parts);
      const result = await deps.acceptMail(parsed, provider);
      deps.logger.info({ event: 'inbound_mail_accepted', provider, mailboxId, messageKey: result.messageKey, status: result.status, format: mail.kind }, 'inbound mail');
      sendJson(res, 202, result);
    } catch (err) {
      if (err instanceof WebhookError) {
        const httpStatus = err.isAuthError ? 401 : status.reject;
        deps.logger.warn({ event: 'inbound_webhook_refused', provider, mailboxId, code: err.code, reason: err.message }, 'inbound webhook refused');
        return refuse(res, provider, httpStatus, err.code, err.message, err.details);
      }
      // The mail was not kept: free the token so the provider's retry of this
      // very request is not refused as a replay.
      if (claimed !== undefined) await deps.redis.del(deps.keys.webhookToken(provider, claimed)).catch(() => undefined);
      if (err instanceof StoreUnavailableError) {
        deps.logger.warn({ event: 'inbound_mail_store_unavailable', provider, mailboxId, err: describeError(err) }, 'inbound mail not accepted: Redis unavailable');
        res.setHeader('retry-after', '30');
        return refuse(res, provider, status.retry, 'STORE_UNAVAILABLE', 'the mail could not be stored; retry later');
      }
      if (err instanceof ValidationError || err instanceof PermanentError) {
        return refuse(res, provider, status.reject, 'INVALID_MAIL', err.message);
      }
      deps.logger.error({ event: 'inbound_webhook_failed', provider, mailboxId, err: describeError(err) }, 'inbound webhook failed');
      // Retried by all three providers; never a 2xx for a mail not kept.
      return refuse(res, provider, 500, 'INTERNAL', 'internal error; the mail was not confirmed, retry');
    }
  };

  // Body errors (too large, aborted) in the provider's terms.
  const bodyRefused = (res: ServerResponse, error: BodyReadError, params: Readonly<Record<string, string>>): void => {
    if (error.status === 413) {
      deps.logger.error({ event: 'inbound_webhook_too_large', provider: params.provider ?? 'mailgun', limit: deps.maxBodyBytes }, 'inbound webhook body over the limit');
      return sendError(res, 413, 'BODY_TOO_LARGE', 'the body exceeds the configured limit');
    }
    sendError(res, 400, 'BAD_REQUEST', 'the request body could not be read');
  };
  const route = (path: string, doc: RouteDoc, provider?: 'mailgun'): IngestRoute =>
    rawRoute({ method: 'POST', path, gate: 'shed', bodyLimit, bodyRefused, doc, handle: (request, res) => handle(request, res, provider ?? String(request.params.provider)) });
  // Table order is match order: the literal `mailgun/…/mime` before `:provider/:mailbox`.
  return [
    route('/v1/mail/inbound/mailgun/:mailbox/mime', webhookDoc('Mailgun\'s "store and notify" MIME format', [{ ...mailboxParameter, in: 'path', required: true }]), 'mailgun'),
    route('/v1/mail/inbound/:provider', webhookDoc('A vendor\'s inbound webhook (mailbox in `?mailbox=`)', [providerParameter, mailboxParameter])),
    route('/v1/mail/inbound/:provider/:mailbox', webhookDoc('A vendor\'s inbound webhook (mailbox in the path)', [providerParameter, { ...mailboxParameter, in: 'path', required: true }])),
  ];
}

const providerParameter = { name: 'provider', in: 'path', required: true, schema: { enum: ['mailgun', 'postmark', 'sendgrid'] } };

/** The vendor's own inbound format; refusals use the status the vendor stops retrying on (Mailgun 406, Postmark 403, SendGrid 400). */
function webhookDoc(summary: string, parameters: RouteDoc['parameters']): RouteDoc {
  return {
    tags: ['intake'],
    summary,
    // The vendor's own authentication, not the producers' credentials.
    security: [{}],
    ...(parameters ? { parameters } : {}),
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': { schema: { type: 'object' } },
        'application/x-www-form-urlencoded': { schema: { type: 'object' } },
        'application/json': { schema: { type: 'object' } },
      },
    },
    responses: {
      '202': accepted,
      '400': errorResponse('SendGrid: the mail cannot be taken'),
      '401': errorResponse('The vendor signature, token or basic auth did not verify'),
      '403': errorResponse('Postmark: the mail cannot be taken'),
      '404': errorResponse('Unknown inbound format, or this vendor is not configured (`webhooks.<vendor>`)'),
      '406': errorResponse('Mailgun: the mail cannot be taken (replayed token, unknown mailbox, invalid mail)'),
      '413': intakeErrors['413'],
      '500': intakeErrors['500'],
      '503': errorResponse('Redis did not confirm the mail; the vendor retries', retryAfterHeader),
    },
  };
}
