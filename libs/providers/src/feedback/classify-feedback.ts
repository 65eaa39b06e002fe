import type { FeedbackVerdict } from '@singleshot/core';

/**
 * What each provider's events mean, as data (docs/feedback.md, "What is
 * recorded"). `undefined` = an event singleshot does not record (opens,
 * clicks): it is counted as `ignored`. `suppress` marks the events after
 * which the recipient should get nothing more: a hard bounce, a complaint, an
 * opt-out; the handler passes those to `onSuppressionSignal`.
 */
export type FeedbackSource = 'ses' | 'sendgrid' | 'postmark' | 'mailgun' | 'twilio';

const v = (type: FeedbackVerdict['type'], hard = false, suppress = false): FeedbackVerdict => ({ type, hard, suppress });
const HARD_BOUNCE = v('bounced', true, true);
const SOFT_BOUNCE = v('bounced');
const COMPLAINT = v('complained', false, true);
const UNSUBSCRIBE = v('unsubscribed', false, true);

/** SES event publishing `eventType` / identity notification `notificationType`; a Bounce by its `bounceType`. */
export function classifySes(eventType: string, bounceType?: string): FeedbackVerdict | undefined {
  switch (eventType) {
    case 'Bounce':
      // Permanent: SES will never deliver to it (and puts it on its account suppression list).
      return bounceType === 'Permanent' ? HARD_BOUNCE : SOFT_BOUNCE;
    case 'Complaint':
      return COMPLAINT;
    case 'Delivery':
      return v('delivered');
    case 'DeliveryDelay':
      return v('deferred');
    case 'Reject':
      return v('dropped');
    case 'Rendering Failure':
      return v('failed', true);
    case 'Send':
      return v('accepted');
    default:
      return undefined;
  }
}

/** A SendGrid Event Webhook `event`; a `bounce` by its `type` (`bounce` = hard, `blocked` = a refusal that may pass later). */
export function classifySendgrid(event: string, bounceType?: string): FeedbackVerdict | undefined {
  switch (event) {
    case 'processed':
      return v('accepted');
    case 'deferred':
      return v('deferred');
    case 'delivered':
      return v('delivered');
    case 'bounce':
      return bounceType === 'blocked' ? SOFT_BOUNCE : HARD_BOUNCE;
    case 'dropped':
      // SendGrid dropped it itself (its own suppression list, invalid address): nothing was sent.
      return v('dropped');
    case 'spamreport':
      return COMPLAINT;
    case 'unsubscribe':
    case 'group_unsubscribe':
      return UNSUBSCRIBE;
    default:
      return undefined;
  }
}

/** Postmark bounce `Type`s that mean the address is gone (the others may pass on a later try). */
const POSTMARK_HARD = new Set(['HardBounce', 'BadEmailAddress', 'ManuallyDeactivated', 'Blocked']);

/** A Postmark webhook by its `RecordType`; a Bounce by its `Type`, a SubscriptionChange by `SuppressSending`. */
export function classifyPostmark(recordType: string, type?: string, suppressSending?: boolean): FeedbackVerdict | undefined {
  switch (recordType) {
    case 'Bounce':
      if (type === 'SpamComplaint') return COMPLAINT;
      return type !== undefined && POSTMARK_HARD.has(type) ? HARD_BOUNCE : SOFT_BOUNCE;
    case 'SpamComplaint':
      return COMPLAINT;
    case 'Delivery':
      return v('delivered');
    case 'SubscriptionChange':
      return suppressSending ? UNSUBSCRIBE : undefined;
    default:
      return undefined;
  }
}

/** A Mailgun `event-data.event`; a `failed` by its `severity` (`temporary` = Mailgun retries it). */
export function classifyMailgun(event: string, severity?: string): FeedbackVerdict | undefined {
  switch (event) {
    case 'accepted':
      return v('accepted');
    case 'delivered':
      return v('delivered');
    case 'failed':
      return severity === 'temporary' ? v('deferred') : HARD_BOUNCE;
    case 'rejected':
      return v('dropped');
    case 'complained':
      return COMPLAINT;
    case 'unsubscribed':
      return UNSUBSCRIBE;
    default:
      return undefined;
  }
}

/** Twilio error codes of a number that can never take the message (unknown destination, landline, invalid, not a mobile). */
const TWILIO_HARD_CODES = new Set(['30005', '30006', '21211', '21614']);
/** The recipient replied STOP (`21610`): an opt-out at the carrier. */
const TWILIO_OPT_OUT = '21610';

/** A Twilio status callback's `MessageStatus` (SMS and WhatsApp), a failure by its `ErrorCode`. */
export function classifyTwilio(status: string, errorCode?: string): FeedbackVerdict | undefined {
  switch (status) {
    case 'accepted':
    case 'scheduled':
    case 'queued':
    case 'sending':
    case 'sent':
      return v('accepted');
    case 'delivered':
    case 'read':
      return v('delivered');
    case 'undelivered':
    case 'failed':
      if (errorCode === TWILIO_OPT_OUT) return UNSUBSCRIBE;
      return errorCode !== undefined && TWILIO_HARD_CODES.has(errorCode) ? v('failed', true, true) : v('failed');
    case 'canceled':
      return v('dropped');
    default:
      return undefined;
  }
}
