import { describe, expect, it } from 'vitest';
import { signUnsubscribeToken, verifyUnsubscribeToken } from './unsubscribe-token';

const secret = 'a-secret-of-at-least-16';
const now = 1_800_000_000_000;
const claim = { recipient: 'ada@example.test', channel: 'email', category: 'news', exp: now + 86_400_000 };

describe('unsubscribe tokens', () => {
  it('verify with the secret that signed them, and carry the claim', () => {
    const token = signUnsubscribeToken(claim, secret);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(verifyUnsubscribeToken(token, secret, now)).toEqual({ ok: true, claim });
  });

  it('expire at exp', () => {
    const token = signUnsubscribeToken(claim, secret);
    expect(verifyUnsubscribeToken(token, secret, claim.exp)).toEqual({ ok: true, claim });
    expect(verifyUnsubscribeToken(token, secret, claim.exp + 1)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuse another secret, a changed payload, a changed signature and garbage', () => {
    const token = signUnsubscribeToken(claim, secret);
    const [payload, sig] = token.split('.') as [string, string];
    expect(verifyUnsubscribeToken(token, 'another-secret-of-16+', now)).toEqual({ ok: false, reason: 'invalid' });
    // Another recipient with the original signature.
    const other = Buffer.from(JSON.stringify({ r: 'eve@example.test', ch: 'email', c: 'news', e: claim.exp })).toString('base64url');
    expect(verifyUnsubscribeToken(`${other}.${sig}`, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    // A longer life with the original signature.
    const later = Buffer.from(JSON.stringify({ r: claim.recipient, ch: 'email', c: 'news', e: claim.exp * 2 })).toString('base64url');
    expect(verifyUnsubscribeToken(`${later}.${sig}`, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    expect(verifyUnsubscribeToken(`${payload}.${flipped}`, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    for (const bad of ['', '.', 'abc', `${payload}.`, `.${sig}`, `${payload}.${sig}.x`, `${payload}!.${sig}`, 'x'.repeat(3000)]) {
      expect(verifyUnsubscribeToken(bad, secret, now), bad.slice(0, 20)).toEqual({ ok: false, reason: 'invalid' });
    }
  });
});
