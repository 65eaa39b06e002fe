import type { RecipientKind } from '@singleshot/core';
import type { ProviderType } from '@singleshot/config';

/** What each provider type can address; types not listed take any text (a URL path, an id). */
const KIND: Partial<Record<ProviderType, RecipientKind>> = {
  smtp: 'email',
  ses: 'email',
  sendgrid: 'email',
  'twilio-sms': 'phone',
  'twilio-whatsapp': 'whatsapp',
  slack: 'slack',
};

/**
 * How decision checks a channel's recipients at fan-out (`recipientProblem`
 * in @singleshot/core): the strictest kind among the channel's providers, so
 * that every provider of the fallback chain can take the recipient. A
 * recipient that fails ends `dead` (`invalid_recipient`) without a send.
 * `phone` is stricter than `whatsapp` (which also takes `whatsapp:+…`): a
 * WhatsApp → SMS chain takes bare E.164 numbers only, which both can send to.
 */
export function recipientKindOf(types: readonly ProviderType[]): RecipientKind {
  let found: RecipientKind | undefined;
  for (const type of types) {
    const kind = KIND[type];
    if (!kind) continue;
    if (kind === 'phone' && found === 'whatsapp') return 'phone';
    found ??= kind;
    if (found !== 'whatsapp') return found;
  }
  return found ?? 'text';
}
