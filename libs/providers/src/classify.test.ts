import { describe, expect, it } from 'vitest';
import { InDoubtError, PermanentError, RetryableError } from '@singleshot/core';
import {
  classifyHttpError,
  classifyHttpStatus,
  classifyLogError,
  classifySmtpError,
  errorCode,
  errorFor,
} from './classify';

describe('classifyHttpStatus', () => {
  it.each([
    [400, 'permanent'],
    [401, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [422, 'permanent'],
    [418, 'permanent'],
    [429, 'retry'],
    [408, 'retry'],
    [409, 'retry'],
    [425, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [599, 'retry'],
    [301, 'permanent'],
    [307, 'permanent'],
    [303, 'in_doubt'],
    [304, 'in_doubt'],
    [199, 'in_doubt'],
    [600, 'in_doubt'],
  ])('HTTP %i → %s', (status, outcome) => {
    expect(classifyHttpStatus(status)).toBe(outcome);
  });
});

describe('classifyHttpError: whether the request started decides', () => {
  it('is safe to fall back before the request was written, whatever the code', () => {
    for (const code of ['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'DEADLINE', 'SOMETHING_NEW']) {
      expect(classifyHttpError(code, false)).toEqual({ outcome: 'retry', safeToFallback: true });
    }
  });
  it('is in doubt once the request was written, even for a connect-phase code', () => {
    for (const code of ['UND_ERR_SOCKET', 'ECONNRESET', 'UND_ERR_HEADERS_TIMEOUT', 'DEADLINE', 'EHOSTUNREACH', 'NEW']) {
      expect(classifyHttpError(code, true)).toEqual({ outcome: 'in_doubt', safeToFallback: false });
    }
  });
  it('is permanent when undici refused to build the request', () => {
    expect(classifyHttpError('UND_ERR_INVALID_ARG', false).outcome).toBe('permanent');
  });
});

describe('classifySmtpError', () => {
  it('lets the reply code decide, in any phase', () => {
    expect(classifySmtpError({ code: 'EENVELOPE', responseCode: 550 }, 'envelope').outcome).toBe('permanent');
    expect(classifySmtpError({ code: 'EENVELOPE', responseCode: 450 }, 'envelope')).toEqual({
      outcome: 'retry',
      safeToFallback: true,
    });
    expect(classifySmtpError({ code: 'EMESSAGE', responseCode: 451 }, 'data')).toEqual({
      outcome: 'retry',
      safeToFallback: false,
    });
    expect(classifySmtpError({ code: 'EAUTH', responseCode: 454 }, 'connect').outcome).toBe('retry');
    expect(classifySmtpError({ code: 'EAUTH', responseCode: 535 }, 'connect').outcome).toBe('permanent');
    expect(classifySmtpError({ code: 'EMESSAGE', responseCode: 552 }, 'data').outcome).toBe('retry');
    expect(classifySmtpError({ code: 'EMESSAGE', responseCode: 554 }, 'data').outcome).toBe('permanent');
    expect(classifySmtpError({ code: 'ECONNECTION', responseCode: 421 }, 'connect').outcome).toBe('retry');
  });
  it('uses the code table when there is no reply', () => {
    expect(classifySmtpError({ code: 'EAUTH' }, 'connect').outcome).toBe('permanent');
    expect(classifySmtpError({ code: 'EENVELOPE' }, 'envelope').outcome).toBe('permanent');
    expect(classifySmtpError({ code: 'ESOCKET', originalCode: 'ECONNREFUSED' }, 'connect')).toEqual({
      outcome: 'retry',
      safeToFallback: true,
    });
  });
  it('puts lost connections and timeouts in doubt only once content was streaming', () => {
    for (const code of ['ECONNECTION', 'ETIMEDOUT', 'DEADLINE', 'UNHEARD_OF']) {
      expect(classifySmtpError({ code }, 'envelope')).toEqual({ outcome: 'retry', safeToFallback: true });
      expect(classifySmtpError({ code }, 'data')).toEqual({ outcome: 'in_doubt', safeToFallback: false });
    }
  });
});

describe('classifyLogError', () => {
  it('separates open failures from failed writes', () => {
    expect(classifyLogError('EACCES')).toEqual({ outcome: 'retry', safeToFallback: true });
    expect(classifyLogError('ENOSPC')).toEqual({ outcome: 'in_doubt', safeToFallback: false });
  });
});

describe('errorFor / errorCode', () => {
  it('builds the core error classes', () => {
    const retry = errorFor({ outcome: 'retry', safeToFallback: true }, 'm', 'HTTP_503', { retryAfterMs: 5 });
    expect(retry).toBeInstanceOf(RetryableError);
    expect(retry).toMatchObject({ code: 'HTTP_503', retryAfterMs: 5, safeToFallback: true });
    expect(errorFor({ outcome: 'permanent', safeToFallback: false }, 'm', 'SMTP_550')).toBeInstanceOf(PermanentError);
    expect(errorFor({ outcome: 'in_doubt', safeToFallback: false }, 'm', 'DEADLINE')).toBeInstanceOf(InDoubtError);
  });
  it('prefers the wrapped system code', () => {
    expect(errorCode({ code: 'ESOCKET', originalCode: 'ECONNREFUSED' })).toBe('ECONNREFUSED');
    expect(errorCode({ code: 'UND_ERR_SOCKET' })).toBe('UND_ERR_SOCKET');
    expect(errorCode('plain string')).toBeUndefined();
  });
});
