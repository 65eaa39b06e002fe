import { sha256Hex as sha } from './hash';
import { describe, expect, it } from 'vitest';
import { eventMessageKey, formatAction, mailMessageKey, normalizeRecipient, operationKey, parseAction } from './keys';

// Computed here with node:crypto, independently of the code under test.
describe('message keys', () => {
  it('mail: sha256("mailbox:normalized Message-ID")', () => {
    expect(mailMessageKey('support', 'abc@example.com')).toBe(sha('support:abc@example.com'));
    expect(mailMessageKey('support', 'abc@example.com')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('mail: the same id in another mailbox is another message', () => {
    expect(mailMessageKey('support', 'abc@example.com')).not.toBe(mailMessageKey('sales', 'abc@example.com'));
  });

  it('mail: different Message-IDs never merge, not even by id-left case', () => {
    expect(mailMessageKey('support', 'abc@example.com')).not.toBe(mailMessageKey('support', 'abd@example.com'));
    expect(mailMessageKey('support', 'ABC@example.com')).not.toBe(mailMessageKey('support', 'abc@example.com'));
  });

  it('event: sha256("source:id")', () => {
    expect(eventMessageKey('shop', 'evt-123')).toBe(sha('shop:evt-123'));
    expect(eventMessageKey('shop', 'evt-123')).not.toBe(eventMessageKey('billing', 'evt-123'));
    expect(eventMessageKey('shop', 'evt-123')).not.toBe(eventMessageKey('shop', 'evt-124'));
  });
});

describe('parseAction / formatAction', () => {
  it('defaults the version to v1', () => {
    expect(parseAction('notify')).toEqual({ name: 'notify', version: 'v1' });
  });

  it('reads an explicit version', () => {
    expect(parseAction('notify_owner:v2')).toEqual({ name: 'notify_owner', version: 'v2' });
    expect(formatAction(parseAction('notify_owner:v2'))).toBe('notify_owner:v2');
    expect(formatAction(parseAction('notify'))).toBe('notify:v1');
  });

  it.each(['', ':v1', 'notify:', 'notify:2', 'notify:V2', 'notify:v2:x', 'Notify', '1notify', 'no tify', 'notify:vx', `a${'b'.repeat(64)}`])(
    'throws on %j',
    (spec) => {
      expect(() => parseAction(spec)).toThrow(TypeError);
    },
  );
});

describe('operationKey', () => {
  const messageKey = sha('shop:evt-1');
  const base = { messageKey, action: parseAction('notify_owner'), recipient: 'owner@example.com', channel: 'email' };

  it('is sha256("messageKey:action:recipient:channel:version")', () => {
    expect(operationKey(base)).toBe(sha(`${messageKey}:notify_owner:owner@example.com:email:v1`));
  });

  it('is stable for the same inputs', () => {
    expect(operationKey({ ...base })).toBe(operationKey(base));
  });

  it('changes with the action version', () => {
    const v2 = operationKey({ ...base, action: parseAction('notify_owner:v2') });
    expect(v2).not.toBe(operationKey(base));
    expect(v2).toBe(sha(`${messageKey}:notify_owner:owner@example.com:email:v2`));
  });

  it('differs per recipient, channel, action and message', () => {
    const keys = [
      operationKey(base),
      operationKey({ ...base, recipient: 'other@example.com' }),
      operationKey({ ...base, channel: 'webhook' }),
      operationKey({ ...base, action: parseAction('notify') }),
      operationKey({ ...base, messageKey: sha('shop:evt-2') }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('compares address recipients case-insensitively and ignores surrounding spaces', () => {
    expect(operationKey({ ...base, recipient: ' Owner@Example.COM ' })).toBe(operationKey(base));
  });

  it('compares non-address recipients exactly', () => {
    expect(operationKey({ ...base, recipient: 'User-1' })).not.toBe(operationKey({ ...base, recipient: 'user-1' }));
  });
});

describe('normalizeRecipient', () => {
  it('lower-cases addresses, keeps other ids as they are', () => {
    expect(normalizeRecipient('  A@B.Example ')).toBe('a@b.example');
    expect(normalizeRecipient(' Team-Ops ')).toBe('Team-Ops');
  });
});
