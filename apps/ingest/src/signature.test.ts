import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from './signature';

const body = Buffer.from('{"id":"1"}');

describe('signBody / verifySignature', () => {
  it('signBody is sha256=<hex HMAC-SHA256 of the raw body>', () => {
    expect(signBody(body, 's1')).toBe(`sha256=${createHmac('sha256', 's1').update(body).digest('hex')}`);
    expect(signBody(body.toString(), 's1')).toBe(signBody(body, 's1'));
  });

  it('accepts any configured secret, refuses others', () => {
    expect(verifySignature(body, signBody(body, 's2'), ['s1', 's2'])).toBe(true);
    expect(verifySignature(body, ` ${signBody(body, 's1')} `, ['s1', 's2'])).toBe(true);
    expect(verifySignature(body, signBody(body, 's3'), ['s1', 's2'])).toBe(false);
    expect(verifySignature(Buffer.from('{"id":"2"}'), signBody(body, 's1'), ['s1'])).toBe(false);
  });

  it('refuses a missing or malformed header when secrets are configured', () => {
    for (const header of [undefined, '', 'sha256=', 'sha256=xyz', signBody(body, 's1').slice(0, -2), `${signBody(body, 's1')}00`]) {
      expect(verifySignature(body, header, ['s1']), String(header)).toBe(false);
    }
  });

  it('is off without secrets', () => {
    expect(verifySignature(body, undefined, [])).toBe(true);
  });
});
