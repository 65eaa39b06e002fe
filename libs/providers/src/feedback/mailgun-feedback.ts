import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FeedbackEvent } from '@singleshot/core';
import { z } from 'zod';
import { classifyMailgun } from './classify-feedback';
import { FeedbackError } from './feedback-error';
import { detailOf, operationKeyOf, operationKeyOfMessageId, timeOf, type ParsedFeedback } from './parsed-feedback';

/** The Mailgun variable that carries the operation key (`X-Mailgun-Variables` at send), back in `user-variables`. */
export const MAILGUN_OPERATION_VARIABLE = 'singleshot-operation';

/** A Mailgun webhook post (JSON): the signature block and one event. */
const mailgunSchema = z.looseObject({
  signature: z.looseObject({ timestamp: z.string().min(1), token: z.string().min(1), signature: z.string().min(1) }),
  'event-data': z.looseObject({
    id: z.string().min(1),
    event: z.string(),
    timestamp: z.number().optional(),
    recipient: z.string().optional(),
    severity: z.string().optional(),
    reason: z.string().optional(),
    'user-variables': z.record(z.string(), z.unknown()).optional(),
    message: z.looseObject({ headers: z.record(z.string(), z.unknown()).optional() }).optional(),
    'delivery-status': z.looseObject({ code: z.number().optional(), description: z.string().optional(), message: z.string().optional() }).optional(),
  }),
});

export type MailgunPost = z.output<typeof mailgunSchema>;

/** The post, shaped as Mailgun documents it, before its signature is checked. */
export function readMailgunPost(json: unknown): MailgunPost {
  const parsed = mailgunSchema.safeParse(json);
  if (!parsed.success) throw new FeedbackError('BAD_SIGNATURE', 'the body has no Mailgun signature block and event-data');
  return parsed.data;
}

/**
 * Checks `signature.signature` = hex HMAC-SHA256 of `timestamp + token` with
 * the webhook signing key, then the timestamp window. Returns the token, which
 * the caller claims once in Redis (a replay is refused).
 */
export function verifyMailgunEvent(post: MailgunPost, opts: { signingKey: string; toleranceSeconds: number; now: number }): string {
  const { timestamp, token, signature } = post.signature;
  const expected = createHmac('sha256', opts.signingKey).update(timestamp + token).digest();
  const given = /^[0-9a-f]{64}$/i.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new FeedbackError('BAD_SIGNATURE', 'the signature does not match feedback.mailgun.signingKey');
  const seconds = Number(timestamp);
  if (!Number.isFinite(seconds) || Math.abs(opts.now / 1000 - seconds) > opts.toleranceSeconds) {
    throw new FeedbackError('STALE_TIMESTAMP', `the signed timestamp is outside the ${opts.toleranceSeconds} s window`);
  }
  return token;
}

/** The event of a verified post, deduplicated by `event-data.id`. */
export function parseMailgunEvent(post: MailgunPost): ParsedFeedback {
  const e = post['event-data'];
  const verdict = classifyMailgun(e.event, e.severity);
  if (!verdict) return { events: [], ignored: [e.event] };
  const headers = e.message?.headers ?? {};
  const operationKey = operationKeyOf(e['user-variables']?.[MAILGUN_OPERATION_VARIABLE]) ?? operationKeyOfMessageId(headers['message-id']);
  const status = e['delivery-status'];
  const detail = detailOf(e.severity, e.reason, status?.code, status?.description || status?.message);
  const occurredAt = timeOf(e.timestamp);
  const messageId = typeof headers['message-id'] === 'string' ? headers['message-id'] : undefined;
  const event: FeedbackEvent = {
    source: 'mailgun',
    eventId: e.id,
    ...(operationKey ? { operationKey } : {}),
    ...(messageId ? { providerMessageId: messageId } : {}),
    ...(e.recipient ? { recipient: e.recipient } : {}),
    providerType: e.event,
    verdict,
    ...(occurredAt !== undefined ? { occurredAt } : {}),
    ...(detail ? { detail } : {}),
  };
  return { events: [event], ignored: [] };
}
