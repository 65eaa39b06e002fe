import type { InboundProviderName } from './types';

/**
 * Which HTTP status means what to each provider's retry logic. Getting this
 * wrong either loses mail (a "stop" status for something that would succeed
 * later) or makes the provider retry for hours what can never succeed.
 * - `reject`: stops the provider's retries. Only for a mail that can never be
 *   accepted (unknown mailbox, a body that is not the provider's format).
 *   Mailgun: 406; Postmark: 403; SendGrid retries only 5xx, so 400.
 * - `retry`: the provider tries again later (Redis down, a bug of ours):
 *   503 for all three.
 * Auth failures answer 401 everywhere: Mailgun and Postmark retry it (so a
 * mistyped secret costs a delay, not the mail), SendGrid does not.
 */
export const PROVIDER_STATUS: Record<InboundProviderName, { reject: number; retry: number }> = {
  mailgun: { reject: 406, retry: 503 },
  postmark: { reject: 403, retry: 503 },
  sendgrid: { reject: 400, retry: 503 },
};

export const INBOUND_PROVIDERS: readonly InboundProviderName[] = ['mailgun', 'postmark', 'sendgrid'];

export function isInboundProvider(name: string): name is InboundProviderName {
  return (INBOUND_PROVIDERS as readonly string[]).includes(name);
}
