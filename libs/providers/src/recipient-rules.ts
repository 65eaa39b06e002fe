import { E164, SLACK_RECIPIENT, type ProviderType } from '@singleshot/config';

/**
 * Recipient formats the native providers can address, checked at fan-out so
 * that a recipient no provider of its channel could ever reach makes no
 * operation (and is reported) instead of a retry loop ending in the DLQ.
 * Providers not listed take any string (an address, a URL path, a user id).
 */
const RULES: Partial<Record<ProviderType, { test(recipient: string): boolean; expected: string }>> = {
  'twilio-sms': { test: (r) => E164.test(r), expected: 'an E.164 phone number (+14155550100)' },
  slack: { test: (r) => SLACK_RECIPIENT.test(r), expected: 'a Slack conversation or user id (C…, G…, D…, U…, W…)' },
};

/**
 * Why `recipient` cannot be sent on a channel whose providers are `types`, or
 * undefined when it can. Every provider of the chain must accept it (a
 * fallback must be able to take over).
 */
export function recipientProblem(types: readonly ProviderType[], recipient: string): string | undefined {
  for (const type of types) {
    const rule = RULES[type];
    if (rule && !rule.test(recipient)) return `${type} needs ${rule.expected}`;
  }
  return undefined;
}
