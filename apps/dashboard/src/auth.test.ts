import { describe, expect, it } from 'vitest';
import { assertSafeBinding, credentialsOf, isLoopbackHost, safeEqual, verifyAuthorization } from './auth';
import { DashboardStartError } from './errors';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('dashboard authentication', () => {
  it('knows loopback from every-interface and remote addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.1', 'dashboard.internal', '::ffff:10.0.0.1', '128.0.0.1']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses a non-loopback address without credentials, and says what to set', () => {
    expect(() => assertSafeBinding('127.0.0.1', undefined)).not.toThrow();
    expect(() => assertSafeBinding('0.0.0.0', { token: 't' })).not.toThrow();
    let error: unknown;
    try {
      assertSafeBinding('0.0.0.0', undefined);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DashboardStartError);
    expect(error).toMatchObject({ code: 'DASHBOARD_AUTH_REQUIRED', message: expect.stringContaining('dashboard.auth.username') });
  });

  it('takes credentials only when complete', () => {
    expect(credentialsOf(undefined)).toBeUndefined();
    expect(credentialsOf({ username: 'a' })).toBeUndefined();
    expect(credentialsOf({ token: '' })).toBeUndefined();
    expect(credentialsOf({ username: 'a', password: 'p' })).toEqual({ basic: { username: 'a', password: 'p' } });
    expect(credentialsOf({ token: 't', username: 'a', password: 'p' })).toEqual({ basic: { username: 'a', password: 'p' }, token: 't' });
  });

  it('accepts exactly the configured basic credentials or bearer token', () => {
    const creds = { basic: { username: 'ops', password: 'pa:ss' }, token: 'tok' };
    expect(verifyAuthorization(basic('ops', 'pa:ss'), creds)).toEqual({ who: 'ops', scheme: 'basic' });
    expect(verifyAuthorization('bearer tok', creds)).toEqual({ who: 'token', scheme: 'bearer' });
    for (const header of [undefined, '', 'Basic', basic('ops', 'pa:s'), basic('op', 'pa:ss'), 'Basic !!!not-base64', 'Bearer tok2', 'Bearer', 'Token tok', `Basic ${Buffer.from('opspa:ss').toString('base64')}`]) {
      expect(verifyAuthorization(header, creds), String(header)).toBeUndefined();
    }
    // A scheme that is not configured is refused even with a matching secret.
    expect(verifyAuthorization('Bearer tok', { basic: creds.basic })).toBeUndefined();
    expect(verifyAuthorization(basic('ops', 'pa:ss'), { token: 'tok' })).toBeUndefined();
  });

  it('compares secrets of any length without throwing', () => {
    expect(safeEqual('a', 'a')).toBe(true);
    expect(safeEqual('a', 'ab')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('ü', 'u')).toBe(false);
  });
});
