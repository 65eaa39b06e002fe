import type { FeedbackEvent } from '@singleshot/core';
import { z } from 'zod';
import { classifyPostmark } from './classify-feedback';
import { FeedbackError } from './feedback-error';
import { detailOf, operationKeyOf, timeOf, type ParsedFeedback } from './parsed-feedback';

/** The Postmark metadata key that carries the operation key (an `X-PM-Metadata-singleshot-operation` header at send). */
export const POSTMARK_OPERATION_METADATA = 'singleshot-operation';

/** The Bounce, SpamComplaint, Delivery and SubscriptionChange webhooks share these fields. */
const postmarkSchema = z.looseObject({
  RecordType: z.string(),
  // A string when it is beyond 2^53 (parseJsonExact keeps the digits), a number below.
  ID: z.union([z.number(), z.string()]).optional(),
  Type: z.string().optional(),
  MessageID: z.string().optional(),
  Email: z.string().optional(),
  Recipient: z.string().optional(),
  Metadata: z.record(z.string(), z.unknown()).optional(),
  Details: z.string().optional(),
  Description: z.string().optional(),
  BouncedAt: z.string().optional(),
  DeliveredAt: z.string().optional(),
  ChangedAt: z.string().optional(),
  SuppressSending: z.boolean().optional(),
});

/**
 * The event of one (authenticated) Postmark webhook post. Bounces and spam
 * complaints carry their own `ID`; a delivery has none, so it is keyed by
 * `MessageID` + `RecordType` + recipient. `ID` is a 64-bit integer: `json`
 * must come from a parse that keeps integers beyond 2^53 as their digits
 * (`parseJsonExact` in libs/http), or two bounces can share one dedup id.
 */
export function parsePostmarkEvent(json: unknown): ParsedFeedback {
  const parsed = postmarkSchema.safeParse(json);
  if (!parsed.success) throw new FeedbackError('INVALID_PAYLOAD', 'the body is not a Postmark webhook (RecordType)');
  const p = parsed.data;
  const verdict = classifyPostmark(p.RecordType, p.Type, p.SuppressSending);
  if (!verdict) return { events: [], ignored: [p.RecordType] };
  const recipient = p.Email ?? p.Recipient;
  if (!recipient) throw new FeedbackError('INVALID_PAYLOAD', `the Postmark ${p.RecordType} names no recipient (Email / Recipient)`);
  const eventId = p.ID !== undefined ? `${p.RecordType}:${p.ID}` : p.MessageID ? `${p.MessageID}:${p.RecordType}:${recipient.toLowerCase()}` : undefined;
  if (!eventId) throw new FeedbackError('INVALID_PAYLOAD', `the Postmark ${p.RecordType} has neither ID nor MessageID`);
  const operationKey = operationKeyOf(p.Metadata?.[POSTMARK_OPERATION_METADATA]);
  const occurredAt = timeOf(p.BouncedAt ?? p.DeliveredAt ?? p.ChangedAt);
  const detail = detailOf(p.Type, p.Description ?? p.Details);
  const event: FeedbackEvent = {
    source: 'postmark',
    eventId,
    ...(operationKey ? { operationKey } : {}),
    ...(p.MessageID ? { providerMessageId: p.MessageID } : {}),
    recipient,
    providerType: p.Type && p.RecordType === 'Bounce' ? p.Type : p.RecordType,
    verdict,
    ...(occurredAt !== undefined ? { occurredAt } : {}),
    ...(detail ? { detail } : {}),
  };
  return { events: [event], ignored: [] };
}
