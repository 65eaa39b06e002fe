import { createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import type { FeedbackEvent } from '@singleshot/core';
import { z } from 'zod';
import { SENDGRID_OPERATION_ARG } from '../sendgrid-provider';
import { classifySendgrid } from './classify-feedback';
import { FeedbackError } from './feedback-error';
import { detailOf, operationKeyOf, timeOf, type ParsedFeedback } from './parsed-feedback';

export const SENDGRID_SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const SENDGRID_TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/**
 * The Signed Event Webhook's verification key: base64 DER (SubjectPublicKeyInfo,
 * as the SendGrid console shows it) or PEM.
 */
export function sendgridPublicKey(key: string): KeyObject {
  const text = key.trim();
  if (text.includes('BEGIN PUBLIC KEY')) return createPublicKey(text);
  return createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
}

/**
 * Checks `X-Twilio-Email-Event-Webhook-Signature`: base64 ECDSA (P-256,
 * SHA-256) over the `X-Twilio-Email-Event-Webhook-Timestamp` value followed
 * by the raw body. The timestamp must be within `toleranceSeconds` of now.
 */
export function verifySendgridEvents(rawBody: Buffer, signature: string | undefined, timestamp: string | undefined, opts: { publicKey: KeyObject; toleranceSeconds: number; now: number }): void {
  if (!signature || !timestamp) throw new FeedbackError('BAD_SIGNATURE', 'the X-Twilio-Email-Event-Webhook-Signature and -Timestamp headers are required');
  const ok = createVerify('sha256').update(timestamp, 'utf8').update(rawBody).verify(opts.publicKey, Buffer.from(signature, 'base64'));
  if (!ok) throw new FeedbackError('BAD_SIGNATURE', 'the event webhook signature does not verify with feedback.sendgrid.publicKey');
  const seconds = Number(timestamp);
  if (!Number.isFinite(seconds) || Math.abs(opts.now / 1000 - seconds) > opts.toleranceSeconds) {
    throw new FeedbackError('STALE_TIMESTAMP', `the signed timestamp is outside the ${opts.toleranceSeconds} s window`);
  }
}

/** One Event Webhook event: custom args (ours: `operation_key`) arrive as top-level fields. */
const sendgridEventSchema = z.looseObject({
  email: z.string(),
  timestamp: z.number(),
  event: z.string(),
  sg_event_id: z.string().min(1),
  sg_message_id: z.string().optional(),
  type: z.string().optional(),
  reason: z.string().optional(),
  status: z.string().optional(),
  response: z.string().optional(),
});

const sendgridBodySchema = z.array(sendgridEventSchema).min(1);

/** The events of a verified Event Webhook post (a JSON array), deduplicated by `sg_event_id`. */
export function parseSendgridEvents(json: unknown): ParsedFeedback {
  const parsed = sendgridBodySchema.safeParse(json);
  if (!parsed.success) throw new FeedbackError('INVALID_PAYLOAD', 'the body is not a SendGrid Event Webhook array (email, timestamp, event, sg_event_id)');
  const out: ParsedFeedback = { events: [], ignored: [] };
  for (const e of parsed.data) {
    const verdict = classifySendgrid(e.event, e.type);
    if (!verdict) {
      out.ignored.push(e.event);
      continue;
    }
    const operationKey = operationKeyOf(e[SENDGRID_OPERATION_ARG]);
    const detail = detailOf(e.type, e.status, e.reason ?? e.response);
    const event: FeedbackEvent = {
      source: 'sendgrid',
      eventId: e.sg_event_id,
      ...(operationKey ? { operationKey } : {}),
      ...(e.sg_message_id ? { providerMessageId: e.sg_message_id } : {}),
      recipient: e.email,
      providerType: e.event,
      verdict,
      occurredAt: timeOf(e.timestamp) as number,
      ...(detail ? { detail } : {}),
    };
    out.events.push(event);
  }
  return out;
}
