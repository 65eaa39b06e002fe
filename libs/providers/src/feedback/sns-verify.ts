import { X509Certificate, createVerify } from 'node:crypto';
import { z } from 'zod';
import { FeedbackError } from './feedback-error';

/** An Amazon SNS HTTP(S) delivery as SNS documents it ("HTTP/HTTPS notification JSON format"). */
export const snsEnvelopeSchema = z.looseObject({
  Type: z.enum(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']),
  MessageId: z.string().min(1),
  TopicArn: z.string().min(1),
  Subject: z.string().optional(),
  Message: z.string(),
  Timestamp: z.string().min(1),
  SignatureVersion: z.enum(['1', '2']),
  Signature: z.string().min(1),
  SigningCertURL: z.string().min(1),
  SubscribeURL: z.string().optional(),
  Token: z.string().optional(),
});

export type SnsEnvelope = z.output<typeof snsEnvelopeSchema>;

/** SNS's hosts: `sns.<region>.amazonaws.com` (and `.amazonaws.com.cn` in China). */
const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?$/;

/** True for an `https:` URL on an SNS host, the only place a signing certificate or a subscription link may point. */
export function isSnsUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && SNS_HOST.test(u.hostname) && u.port === '' && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/**
 * The string SNS signs: `Name\nvalue\n` for each field of the message type, in
 * the documented order; `Subject` only when the notification has one.
 */
export function snsStringToSign(m: SnsEnvelope): string {
  const fields =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', ...(m.Subject !== undefined ? ['Subject'] : []), 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  let out = '';
  for (const name of fields) {
    const value = (m as Record<string, unknown>)[name];
    if (typeof value !== 'string') throw new FeedbackError('BAD_SIGNATURE', `the signed field ${name} is missing`);
    out += `${name}\n${value}\n`;
  }
  return out;
}

export interface SnsVerifierOptions {
  /**
   * PEM certificates to verify against instead of fetching `SigningCertURL`
   * (pinning, air-gapped hosts, tests). `SigningCertURL` must still be an SNS URL.
   */
  trustedCertificates?: readonly string[];
  /** Topics accepted; empty or absent: any topic (the signature still proves it is SNS). */
  topicArns?: readonly string[];
  /** Fetches a certificate's PEM (default: HTTPS GET, 5 s). */
  fetchCertificate?: (url: string) => Promise<string>;
  now?: () => number;
}

const MAX_CACHED = 32;

/**
 * Verifies SNS message signatures (SignatureVersion 1 = SHA1withRSA, 2 =
 * SHA256withRSA) with the certificate at `SigningCertURL`, which must be an
 * https SNS URL. Fetched certificates are cached per URL (SNS rotates them
 * by publishing a new URL). A certificate outside its validity is refused.
 */
export class SnsVerifier {
  private readonly cache = new Map<string, Promise<X509Certificate>>();
  private readonly trusted: X509Certificate[];
  private readonly now: () => number;

  constructor(private readonly options: SnsVerifierOptions = {}) {
    this.trusted = (options.trustedCertificates ?? []).map((pem) => new X509Certificate(pem));
    this.now = options.now ?? Date.now;
  }

  async verify(m: SnsEnvelope): Promise<void> {
    if (!isSnsUrl(m.SigningCertURL)) throw new FeedbackError('UNTRUSTED_CERTIFICATE_URL', 'SigningCertURL is not an https URL on an SNS host (sns.<region>.amazonaws.com)');
    const topics = this.options.topicArns ?? [];
    const certificates = this.trusted.length > 0 ? this.trusted : [await this.certificate(m.SigningCertURL)];
    const text = snsStringToSign(m);
    const signature = Buffer.from(m.Signature, 'base64');
    const algorithm = m.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256';
    const now = this.now();
    const ok = certificates.some((cert) => {
      if (Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) < now) return false;
      return createVerify(algorithm).update(text, 'utf8').verify(cert.publicKey, signature);
    });
    if (!ok) throw new FeedbackError('BAD_SIGNATURE', 'the SNS message signature does not verify with its signing certificate');
    // After the signature: only a genuine SNS message learns that its topic is not taken.
    if (topics.length > 0 && !topics.includes(m.TopicArn)) throw new FeedbackError('UNKNOWN_TOPIC', 'the SNS topic is not in feedback.ses.topicArns');
  }

  private certificate(url: string): Promise<X509Certificate> {
    let entry = this.cache.get(url);
    if (!entry) {
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
      entry = (this.options.fetchCertificate ?? fetchPem)(url).then(
        (pem) => new X509Certificate(pem),
        (err: unknown) => {
          throw new FeedbackError('CERTIFICATE_UNAVAILABLE', 'the SNS signing certificate could not be fetched', { cause: err });
        },
      );
      // A failed fetch is not cached: the provider's retry fetches again.
      entry.catch(() => this.cache.delete(url));
      this.cache.set(url, entry);
    }
    return entry;
  }
}

async function fetchPem(url: string): Promise<string> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return await res.text();
}
