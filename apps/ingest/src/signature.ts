import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const SIGNATURE_HEADER = 'x-singleshot-signature';

/**
 * Checks a body signature against every configured secret (several allow
 * rotation). Constant-time per comparison. No secrets: signing is off.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return true;
  if (!header) return false;
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!match) return false;
  const given = Buffer.from((match[1] as string).toLowerCase(), 'hex');
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}

/** The header value a producer sends (for clients and tests). */
export function signBody(rawBody: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}
