import type { FeedbackConfig } from '@singleshot/config';
import { parseJsonExact } from '@singleshot/http';
import { basicAuthMatches } from '@singleshot/mail';
import {
  FeedbackError,
  SENDGRID_SIGNATURE_HEADER,
  SENDGRID_TIMESTAMP_HEADER,
  TWILIO_OPERATION_PARAM,
  TWILIO_SIGNATURE_HEADER,
  parseMailgunEvent,
  parsePostmarkEvent,
  parseSendgridEvents,
  parseTwilioStatus,
  readMailgunPost,
  sendgridPublicKey,
  verifyMailgunEvent,
  verifySendgridEvents,
  verifyTwilio,
  type ParsedFeedback,
} from '@singleshot/providers';
import type { RouteRequest } from '../http/route';

/**
 * Parses a JSON body, refusing a body that is not JSON (after authentication,
 * where the provider's scheme allows it). An integer beyond 2^53 is kept as
 * its digits: Postmark's event `ID` is 64-bit, and as a JS number two events
 * would share one dedup id.
 */
export function jsonOf(body: Buffer): unknown {
  try {
    return parseJsonExact(body.toString('utf8'));
  } catch {
    throw new FeedbackError('INVALID_PAYLOAD', 'the body is not valid JSON');
  }
}

/** Claims a Mailgun token once; false when it was seen before. */
export type TokenClaim = (token: string, ttlSeconds: number) => Promise<boolean>;

/** What a feedback post of one provider needs to be authenticated and read. */
export type PostReader = (request: RouteRequest<Buffer>, now: number) => Promise<{ parsed: ParsedFeedback; release?: () => Promise<void> }>;

/** SendGrid: the signature over timestamp + raw body, then the event array. */
export function sendgridReader(config: NonNullable<FeedbackConfig['sendgrid']>): PostReader {
  const publicKey = sendgridPublicKey(config.publicKey as string);
  return async (request, now) => {
    verifySendgridEvents(request.body, request.header(SENDGRID_SIGNATURE_HEADER), request.header(SENDGRID_TIMESTAMP_HEADER), {
      publicKey,
      toleranceSeconds: config.toleranceSeconds,
      now,
    });
    return { parsed: parseSendgridEvents(jsonOf(request.body)) };
  };
}

/** Postmark: basic auth from the webhook URL, then one event. */
export function postmarkReader(config: NonNullable<FeedbackConfig['postmark']>): PostReader {
  const expected = { username: config.username, password: config.password as string };
  return async (request) => {
    if (!basicAuthMatches({ rawBody: request.body, headers: request.req.headers, query: {} }, expected)) {
      throw new FeedbackError('UNAUTHORIZED', 'basic auth does not match feedback.postmark');
    }
    return { parsed: parsePostmarkEvent(jsonOf(request.body)) };
  };
}

/** Mailgun: the signature block, the timestamp window, the token taken once. */
export function mailgunReader(config: NonNullable<FeedbackConfig['mailgun']>, claim: TokenClaim, release: (token: string) => Promise<void>): PostReader {
  return async (request, now) => {
    let json: unknown;
    try {
      json = parseJsonExact(request.body.toString('utf8'));
    } catch {
      throw new FeedbackError('BAD_SIGNATURE', 'the body is not JSON and carries no Mailgun signature');
    }
    const post = readMailgunPost(json);
    const token = verifyMailgunEvent(post, { signingKey: config.signingKey as string, toleranceSeconds: config.toleranceSeconds, now });
    // Kept past the window in both directions: an older token is refused by its timestamp anyway.
    if (!(await claim(token, 2 * config.toleranceSeconds + 60))) throw new FeedbackError('REPLAYED_TOKEN', 'this signature token was already used');
    return { parsed: parseMailgunEvent(post), release: () => release(token) };
  };
}

/** Twilio: `X-Twilio-Signature` over the public URL (with this request's query) and the sorted form fields. */
export function twilioReader(config: NonNullable<FeedbackConfig['twilio']>): PostReader {
  const base = config.publicUrl.replace(/\?.*$/, '');
  return async (request) => {
    const url = request.req.url ?? '';
    const q = url.indexOf('?');
    const fullUrl = q < 0 ? base : `${base}${url.slice(q)}`;
    const form = new URLSearchParams(request.body.toString('utf8'));
    const params = [...form.entries()];
    verifyTwilio(request.header(TWILIO_SIGNATURE_HEADER), fullUrl, params, [config.authToken as string]);
    const op = request.query[TWILIO_OPERATION_PARAM];
    return { parsed: parseTwilioStatus(new Map(params), typeof op === 'string' ? op : undefined) };
  };
}
