import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Time-limited links to a stored document: `<baseUrl>/v1/documents/<store key>?expires=<unix s>&sig=<hmac>`.
 * The signature covers the store key and the expiry, so a link cannot be
 * stretched or pointed at another document.
 */
export function signDocumentLink(input: { baseUrl: string; storeKey: string; expiresAt: number; secret: string }): string {
  const expires = Math.floor(input.expiresAt / 1000);
  const sig = signature(input.storeKey, expires, input.secret);
  return `${input.baseUrl.replace(/\/+$/, '')}/v1/documents/${input.storeKey}?expires=${expires}&sig=${sig}`;
}

function signature(storeKey: string, expires: number, secret: string): string {
  return createHmac('sha256', secret).update(`${storeKey}\n${expires}`).digest('base64url');
}

/** Checks a link's signature and expiry: `ok`, `expired` or `invalid`. */
export function verifyDocumentLink(input: { storeKey: string; expires: string; sig: string; secret: string; now?: number }): 'ok' | 'expired' | 'invalid' {
  if (!/^\d{1,12}$/.test(input.expires)) return 'invalid';
  const expires = Number(input.expires);
  const expected = Buffer.from(signature(input.storeKey, expires, input.secret));
  const given = Buffer.from(input.sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
  return expires * 1000 < (input.now ?? Date.now()) ? 'expired' : 'ok';
}
