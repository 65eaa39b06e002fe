import { z } from 'zod';
import { httpUrl, nonEmpty, positiveInt } from './primitives';

const requireOne = (field: string, file: string) => (m: Record<string, unknown>, ctx: z.RefinementCtx) => {
  if (m[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `required: give ${field} or ${file}` });
};

/**
 * Delivery feedback endpoints (`/v1/feedback/<provider>`, docs/feedback.md).
 * A provider without an entry answers 404: no feedback endpoint is open
 * without its provider's authentication.
 */
export const feedbackSchema = z.strictObject({
  ses: z
    .strictObject({
      topicArns: z.array(nonEmpty).default([]).describe('SNS topics accepted (their `TopicArn`); empty: any topic whose signature verifies.'),
      confirmSubscriptions: z
        .boolean()
        .default(true)
        .describe('Confirm an SNS `SubscriptionConfirmation` by a GET on its `SubscribeURL` (only an https SNS host); off: it is logged (`sns_subscription_pending`) for a human to confirm.'),
      trustedCertificates: z
        .array(z.string().includes('BEGIN CERTIFICATE', { error: 'must be a PEM certificate' }))
        .default([])
        .describe('PEM certificates that sign SNS messages, used instead of fetching `SigningCertURL` (pinning, hosts without egress, tests); `SigningCertURL` must still be an https SNS host.'),
    })
    .optional()
    .describe('Amazon SES events through an SNS HTTPS subscription (`POST /v1/feedback/ses`): every message\'s SNS signature (SignatureVersion 1 or 2) is verified with the certificate at its `SigningCertURL`, an https `sns.<region>.amazonaws.com` URL.'),
  sendgrid: z
    .strictObject({
      publicKey: z.string().min(1).optional().describe('The Signed Event Webhook verification key (base64 DER as the SendGrid console shows it, or PEM), or `publicKeyFile`.'),
      publicKeyFile: nonEmpty.optional().describe('A file holding the verification key.'),
      toleranceSeconds: positiveInt.default(600).describe('Accepted distance of `X-Twilio-Email-Event-Webhook-Timestamp` from now.'),
    })
    .superRefine(requireOne('publicKey', 'publicKeyFile'))
    .optional()
    .describe('SendGrid Event Webhook (`POST /v1/feedback/sendgrid`), signed: ECDSA P-256 over the timestamp header and the raw body.'),
  postmark: z
    .strictObject({
      username: nonEmpty.describe('Basic auth user put in the webhook URL.'),
      password: z.string().min(1).optional().describe('Basic auth password (or `passwordFile`).'),
      passwordFile: nonEmpty.optional().describe('A file holding the password.'),
    })
    .superRefine(requireOne('password', 'passwordFile'))
    .optional()
    .describe('Postmark bounce, spam complaint, delivery and subscription change webhooks (`POST /v1/feedback/postmark`) with HTTP basic auth.'),
  mailgun: z
    .strictObject({
      signingKey: z.string().min(1).optional().describe('Mailgun HTTP webhook signing key (or `signingKeyFile`).'),
      signingKeyFile: nonEmpty.optional().describe('A file holding the signing key.'),
      toleranceSeconds: positiveInt.default(300).describe('Accepted distance of the signed timestamp from now; a token is remembered for twice this (a replay is refused).'),
    })
    .superRefine(requireOne('signingKey', 'signingKeyFile'))
    .optional()
    .describe('Mailgun event webhooks (`POST /v1/feedback/mailgun`): HMAC-SHA256 of timestamp + token, each token taken once.'),
  twilio: z
    .strictObject({
      authToken: z.string().min(1).optional().describe('The account\'s auth token, which signs `X-Twilio-Signature` (or `authTokenFile`).'),
      authTokenFile: nonEmpty.optional().describe('A file holding the auth token.'),
      publicUrl: httpUrl.describe('The URL Twilio calls for `/v1/feedback/twilio`, exactly as configured at Twilio and in the provider\'s `statusCallbackUrl` (behind a proxy it differs from what ingest sees, and the signature covers it).'),
    })
    .superRefine(requireOne('authToken', 'authTokenFile'))
    .optional()
    .describe('Twilio status callbacks for SMS and WhatsApp (`POST /v1/feedback/twilio?op=<operation key>`), signed with `X-Twilio-Signature`.'),
});

export type FeedbackConfig = z.output<typeof feedbackSchema>;
