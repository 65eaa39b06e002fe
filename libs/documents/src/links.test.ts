import { describe, expect, it } from 'vitest';
import { signDocumentLink, verifyDocumentLink } from './links';

const secret = 'a-secret-of-enough-length';
const storeKey = `${'a'.repeat(64)}/po-1.pdf`;

function parts(url: string): { storeKey: string; expires: string; sig: string } {
  const u = new URL(url);
  return { storeKey: u.pathname.replace('/v1/documents/', ''), expires: u.searchParams.get('expires') ?? '', sig: u.searchParams.get('sig') ?? '' };
}

describe('document links', () => {
  const now = Date.parse('2026-12-01T00:00:00Z');
  const url = signDocumentLink({ baseUrl: 'https://ss.example.test/', storeKey, expiresAt: now + 3_600_000, secret });

  it('a link verifies until it expires, then reads expired', () => {
    expect(url.startsWith(`https://ss.example.test/v1/documents/${storeKey}?expires=`)).toBe(true);
    expect(verifyDocumentLink({ ...parts(url), secret, now })).toBe('ok');
    expect(verifyDocumentLink({ ...parts(url), secret, now: now + 3_601_000 })).toBe('expired');
  });

  it('another key, another document, another expiry or a bad signature is invalid', () => {
    const p = parts(url);
    expect(verifyDocumentLink({ ...p, secret: 'another-secret-of-length', now })).toBe('invalid');
    expect(verifyDocumentLink({ ...p, storeKey: `${'b'.repeat(64)}/po-1.pdf`, secret, now })).toBe('invalid');
    expect(verifyDocumentLink({ ...p, expires: String(Number(p.expires) + 1), secret, now })).toBe('invalid');
    expect(verifyDocumentLink({ ...p, sig: '', secret, now })).toBe('invalid');
    expect(verifyDocumentLink({ ...p, expires: 'soon', secret, now })).toBe('invalid');
  });
});
