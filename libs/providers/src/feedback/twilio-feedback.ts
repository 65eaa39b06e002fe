import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FeedbackEvent } from '@singleshot/core';
import { classifyTwilio } from './classify-feedback';
import { FeedbackError } from './feedback-error';
import { detailOf, operationKeyOf, type ParsedFeedback } from './parsed-feedback';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** The query parameter of the status callback URL that carries the operation key (set by the twilio-sms provider). */
export const TWILIO_OPERATION_PARAM = 'op';

/**
 * Twilio's request signature: base64 HMAC-SHA1, keyed with the account's
 * auth token, of the full URL Twilio called (query included) followed by
 * every POST parameter's name and value, sorted by name.
 */
export function twilioSignature(authToken: string, url: string, params: ReadonlyArray<[string, string]>): string {
  const sorted = [...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let data = url;
  for (const [k, value] of sorted) data += k + value;
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Checks `X-Twilio-Signature` against every auth token given (several allow rotation). */
export function verifyTwilio(signature: string | undefined, url: string, params: ReadonlyArray<[string, string]>, authTokens: readonly string[]): void {
  if (!signature) throw new FeedbackError('BAD_SIGNATURE', 'the X-Twilio-Signature header is required');
  const given = Buffer.from(signature, 'base64');
  const ok = authTokens.some((token) => {
    const expected = Buffer.from(twilioSignature(token, url, params), 'base64');
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!ok) throw new FeedbackError('BAD_SIGNATURE', 'X-Twilio-Signature does not match (feedback.twilio.authToken and publicUrl)');
}

/**
 * The event of a verified status callback (SMS or WhatsApp), deduplicated by
 * `MessageSid` + `MessageStatus`; the operation comes from the callback URL's
 * `op` parameter, which the signature covers.
 */
export function parseTwilioStatus(params: ReadonlyMap<string, string>, op: string | undefined): ParsedFeedback {
  const sid = params.get('MessageSid') ?? params.get('SmsSid');
  const status = params.get('MessageStatus') ?? params.get('SmsStatus');
  if (!sid || !status) throw new FeedbackError('INVALID_PAYLOAD', 'a status callback needs MessageSid and MessageStatus');
  const errorCode = params.get('ErrorCode') || undefined;
  const verdict = classifyTwilio(status, errorCode);
  if (!verdict) return { events: [], ignored: [status] };
  const operationKey = operationKeyOf(op);
  const to = params.get('To');
  const detail = detailOf(errorCode, params.get('ChannelPrefix'));
  const event: FeedbackEvent = {
    source: 'twilio',
    eventId: `${sid}:${status}`,
    ...(operationKey ? { operationKey } : {}),
    providerMessageId: sid,
    ...(to ? { recipient: to } : {}),
    providerType: status,
    verdict,
    ...(detail ? { detail } : {}),
  };
  return { events: [event], ignored: [] };
}
