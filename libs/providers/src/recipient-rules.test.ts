import { describe, expect, it } from 'vitest';
import { recipientProblem } from '@singleshot/core';
import { recipientKindOf } from './recipient-rules';

describe('recipient kinds of the native providers', () => {
  it('picks the kind from the channel\'s providers', () => {
    expect(recipientKindOf(['ses', 'sendgrid'])).toBe('email');
    expect(recipientKindOf(['twilio-sms'])).toBe('phone');
    expect(recipientKindOf(['slack'])).toBe('slack');
    expect(recipientKindOf(['http', 'log'])).toBe('text');
  });

  it('SMS needs E.164, Slack a conversation or user id', () => {
    for (const ok of ['+14155550100', '+442071838750']) expect(recipientProblem('phone', ok), ok).toBeUndefined();
    for (const bad of ['4155550100', '+1 415 555 0100', '+0123456789', '+1415', 'a@example.com']) expect(recipientProblem('phone', bad), bad).toContain('E.164');
    for (const ok of ['C0123456789', 'U0123ABCD', 'D024BE91L', 'W012A3CDE']) expect(recipientProblem('slack', ok), ok).toBeUndefined();
    for (const bad of ['#general', 'c0123456789', 'general', 'C01']) expect(recipientProblem('slack', bad), bad).toBeDefined();
  });
});
