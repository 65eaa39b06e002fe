import { describe, expect, it } from 'vitest';
import { recipientProblem } from '@singleshot/core';
import { recipientKindOf } from './recipient-rules';

describe('recipient kinds of the native providers', () => {
  it('picks the kind from the channel\'s providers', () => {
    expect(recipientKindOf(['ses', 'sendgrid'])).toBe('email');
    expect(recipientKindOf(['twilio-sms'])).toBe('phone');
    expect(recipientKindOf(['slack'])).toBe('slack');
    expect(recipientKindOf(['http', 'log'])).toBe('text');
    expect(recipientKindOf(['twilio-whatsapp'])).toBe('whatsapp');
    // SMS cannot send to `whatsapp:+…`: a chain with both takes bare numbers only.
    expect(recipientKindOf(['twilio-whatsapp', 'twilio-sms'])).toBe('phone');
    expect(recipientKindOf(['twilio-sms', 'twilio-whatsapp'])).toBe('phone');
  });

  it('WhatsApp takes E.164, bare or with the whatsapp: prefix', () => {
    for (const ok of ['+4915112345678', 'whatsapp:+4915112345678']) expect(recipientProblem('whatsapp', ok), ok).toBeUndefined();
    for (const bad of ['whatsapp:4915112345678', 'WhatsApp:+4915112345678', 'whatsapp:', '+49 151', 'sms:+4915112345678']) expect(recipientProblem('whatsapp', bad), bad).toContain('WhatsApp');
    expect(recipientProblem('phone', 'whatsapp:+4915112345678')).toContain('E.164');
  });

  it('SMS needs E.164, Slack a conversation or user id', () => {
    for (const ok of ['+14155550100', '+442071838750']) expect(recipientProblem('phone', ok), ok).toBeUndefined();
    for (const bad of ['4155550100', '+1 415 555 0100', '+0123456789', '+1415', 'a@example.com']) expect(recipientProblem('phone', bad), bad).toContain('E.164');
    for (const ok of ['C0123456789', 'U0123ABCD', 'D024BE91L', 'W012A3CDE']) expect(recipientProblem('slack', ok), ok).toBeUndefined();
    for (const bad of ['#general', 'c0123456789', 'general', 'C01']) expect(recipientProblem('slack', bad), bad).toBeDefined();
  });
});
