import type { FeedbackEvent } from '@singleshot/core';
import { z } from 'zod';
import { SES_OPERATION_TAG } from '../ses-provider';
import { OPERATION_HEADER } from '../smtp-provider';
import { classifySes } from './classify-feedback';
import { FeedbackError } from './feedback-error';
import { detailOf, operationKeyOf, timeOf, type ParsedFeedback } from './parsed-feedback';
import type { SnsEnvelope } from './sns-verify';

const recipients = z.array(z.looseObject({ emailAddress: z.string(), diagnosticCode: z.string().optional() })).optional();

/**
 * The SES message inside an SNS notification: event publishing (`eventType`,
 * configuration set event destinations, with `mail.tags`) or identity
 * notifications (`notificationType`).
 */
const sesMessageSchema = z.looseObject({
  eventType: z.string().optional(),
  notificationType: z.string().optional(),
  mail: z.looseObject({
    messageId: z.string().optional(),
    destination: z.array(z.string()).optional(),
    tags: z.record(z.string(), z.array(z.string())).optional(),
    headers: z.array(z.looseObject({ name: z.string(), value: z.string() })).optional(),
  }),
  bounce: z.looseObject({ bounceType: z.string().optional(), bounceSubType: z.string().optional(), bouncedRecipients: recipients, feedbackId: z.string().optional(), timestamp: z.string().optional() }).optional(),
  complaint: z.looseObject({ complainedRecipients: recipients, feedbackId: z.string().optional(), complaintFeedbackType: z.string().optional(), timestamp: z.string().optional() }).optional(),
  delivery: z.looseObject({ recipients: z.array(z.string()).optional(), timestamp: z.string().optional(), smtpResponse: z.string().optional() }).optional(),
  deliveryDelay: z.looseObject({ delayedRecipients: recipients, delayType: z.string().optional(), timestamp: z.string().optional() }).optional(),
  reject: z.looseObject({ reason: z.string().optional() }).optional(),
});

type SesMessage = z.output<typeof sesMessageSchema>;

/** The operation key an SES message carries: the `singleshot-operation` tag, else the `X-Singleshot-Operation` header. */
function operationOf(msg: SesMessage): string | undefined {
  const tag = operationKeyOf(msg.mail.tags?.[SES_OPERATION_TAG]?.[0]);
  if (tag) return tag;
  const header = msg.mail.headers?.find((h) => h.name.toLowerCase() === OPERATION_HEADER.toLowerCase());
  return operationKeyOf(header?.value);
}

/**
 * The events of one verified SNS `Notification` from SES: one per recipient
 * (an operation has one). Deduplicated by the bounce's or complaint's
 * `feedbackId`, else the SNS `MessageId` (the same on SNS's retries), with the
 * recipient.
 */
export function parseSesNotification(envelope: SnsEnvelope): ParsedFeedback {
  let json: unknown;
  try {
    json = JSON.parse(envelope.Message);
  } catch {
    throw new FeedbackError('INVALID_PAYLOAD', 'the SNS Message is not an SES notification (not JSON)');
  }
  const parsed = sesMessageSchema.safeParse(json);
  if (!parsed.success) throw new FeedbackError('INVALID_PAYLOAD', 'the SNS Message is not an SES notification');
  const msg = parsed.data;
  const type = msg.eventType ?? msg.notificationType;
  if (!type) throw new FeedbackError('INVALID_PAYLOAD', 'the SES notification has no eventType or notificationType');
  const verdict = classifySes(type, msg.bounce?.bounceType);
  if (!verdict) return { events: [], ignored: [type] };

  let who: Array<{ address: string; detail?: string }>;
  let feedbackId: string | undefined;
  let at: string | undefined;
  let detail: string | undefined;
  if (type === 'Bounce') {
    who = (msg.bounce?.bouncedRecipients ?? []).map((r) => ({ address: r.emailAddress, ...(r.diagnosticCode ? { detail: r.diagnosticCode } : {}) }));
    feedbackId = msg.bounce?.feedbackId;
    at = msg.bounce?.timestamp;
    detail = detailOf(msg.bounce?.bounceType, msg.bounce?.bounceSubType);
  } else if (type === 'Complaint') {
    who = (msg.complaint?.complainedRecipients ?? []).map((r) => ({ address: r.emailAddress }));
    feedbackId = msg.complaint?.feedbackId;
    at = msg.complaint?.timestamp;
    detail = detailOf(msg.complaint?.complaintFeedbackType);
  } else if (type === 'Delivery') {
    who = (msg.delivery?.recipients ?? []).map((address) => ({ address }));
    at = msg.delivery?.timestamp;
    detail = detailOf(msg.delivery?.smtpResponse);
  } else if (type === 'DeliveryDelay') {
    who = (msg.deliveryDelay?.delayedRecipients ?? []).map((r) => ({ address: r.emailAddress }));
    at = msg.deliveryDelay?.timestamp;
    detail = detailOf(msg.deliveryDelay?.delayType);
  } else {
    who = (msg.mail.destination ?? []).map((address) => ({ address }));
    detail = detailOf(msg.reject?.reason);
  }
  if (who.length === 0) throw new FeedbackError('INVALID_PAYLOAD', `the SES ${type} names no recipient`);
  const operationKey = operationOf(msg);
  const occurredAt = timeOf(at);
  const events: FeedbackEvent[] = who.map((r) => ({
    source: 'ses',
    eventId: `${feedbackId ?? envelope.MessageId}:${r.address.toLowerCase()}`,
    ...(operationKey ? { operationKey } : {}),
    ...(msg.mail.messageId ? { providerMessageId: msg.mail.messageId } : {}),
    recipient: r.address,
    providerType: type,
    verdict,
    ...(occurredAt !== undefined ? { occurredAt } : {}),
    ...(detailOf(detail, r.detail) !== undefined ? { detail: detailOf(detail, r.detail) as string } : {}),
  }));
  return { events, ignored: [] };
}
