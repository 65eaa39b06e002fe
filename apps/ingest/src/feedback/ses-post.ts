import type { FeedbackConfig } from '@singleshot/config';
import { FeedbackError, SnsVerifier, isSnsUrl, parseSesNotification, snsEnvelopeSchema } from '@singleshot/providers';
import { jsonOf, type PostReader } from './provider-posts';

/** pino-compatible subset. */
interface SesLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SesReaderDeps {
  /** Fetches a signing certificate (default: HTTPS GET). */
  fetchCertificate?: (url: string) => Promise<string>;
  /** Confirms a subscription (default: HTTPS GET of the SubscribeURL). */
  confirmSubscription?: (url: string) => Promise<void>;
  logger: SesLogger;
}

async function getUrl(url: string): Promise<void> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  await res.arrayBuffer();
}

/**
 * SES through SNS: the SNS signature first (any message type), then a
 * `SubscriptionConfirmation` is confirmed (an https SNS SubscribeURL only),
 * an `UnsubscribeConfirmation` logged, and a `Notification` read as SES events.
 */
export function sesReader(config: NonNullable<FeedbackConfig['ses']>, deps: SesReaderDeps): PostReader {
  const verifier = new SnsVerifier({
    trustedCertificates: config.trustedCertificates,
    topicArns: config.topicArns,
    ...(deps.fetchCertificate ? { fetchCertificate: deps.fetchCertificate } : {}),
  });
  const confirm = deps.confirmSubscription ?? getUrl;
  return async (request) => {
    const parsed = snsEnvelopeSchema.safeParse(jsonOf(request.body));
    // Without the envelope there is no signature to check: refused as unauthenticated.
    if (!parsed.success) throw new FeedbackError('BAD_SIGNATURE', 'the body is not a signed SNS message (Type, MessageId, Signature, SigningCertURL…)');
    const envelope = parsed.data;
    await verifier.verify(envelope);
    if (envelope.Type === 'Notification') return { parsed: parseSesNotification(envelope) };
    const topicArn = envelope.TopicArn;
    if (envelope.Type === 'UnsubscribeConfirmation') {
      deps.logger.warn({ event: 'sns_unsubscribed', topicArn }, 'the SNS subscription of the SES feedback endpoint was removed');
      return { parsed: { events: [], ignored: [] } };
    }
    const subscribeUrl = envelope.SubscribeURL ?? '';
    if (!isSnsUrl(subscribeUrl)) throw new FeedbackError('UNTRUSTED_SUBSCRIBE_URL', 'SubscribeURL is not an https URL on an SNS host');
    if (!config.confirmSubscriptions) {
      deps.logger.warn({ event: 'sns_subscription_pending', topicArn, subscribeUrl }, 'SNS subscription not confirmed (feedback.ses.confirmSubscriptions is off): confirm it by hand');
      return { parsed: { events: [], ignored: [] } };
    }
    try {
      await confirm(subscribeUrl);
    } catch (err) {
      throw new FeedbackError('SUBSCRIPTION_CONFIRM_FAILED', 'the SNS subscription could not be confirmed (GET SubscribeURL failed)', { cause: err });
    }
    deps.logger.info({ event: 'sns_subscription_confirmed', topicArn }, 'SNS subscription confirmed');
    return { parsed: { events: [], ignored: [] } };
  };
}
