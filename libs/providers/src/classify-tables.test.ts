import { describe, expect, it } from 'vitest';
import { InDoubtError, PermanentError, RetryableError, parseRetryAfter, retryDelayMs } from '@singleshot/core';
import {
  HTTP_ERROR_TABLE,
  HTTP_STATUS_TABLE,
  LOG_ERROR_TABLE,
  SMTP_ERROR_TABLE,
  SMTP_REPLY_TABLE,
  classifyHttpError,
  classifyHttpStatus,
  classifyLogError,
  classifySmtpError,
  errorFor,
} from './classify';

// Every row of every table, checked by family, so a row added or changed shows
// up here. The single cases live in classify.test.ts.

describe('HTTP status table', () => {
  it('every listed status classifies as its row says', () => {
    for (const [status, outcome] of Object.entries(HTTP_STATUS_TABLE)) {
      expect(classifyHttpStatus(Number(status)), `HTTP ${status}`).toBe(outcome);
    }
  });

  it('class defaults: the contract statuses (429 and 5xx retry; 400/401/403/404/422 permanent)', () => {
    for (let status = 500; status <= 599; status++) expect(classifyHttpStatus(status), `HTTP ${status}`).toBe('retry');
    for (const status of [400, 401, 403, 404, 405, 406, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 424, 426, 428, 431, 451]) {
      expect(classifyHttpStatus(status), `HTTP ${status}`).toBe('permanent');
    }
  });

  it('the 4xx that mean "not now" are retried, not dead-lettered', () => {
    for (const status of [408, 409, 423, 425, 429]) expect(classifyHttpStatus(status), `HTTP ${status}`).toBe('retry');
  });

  it('redirects are never followed; only 303 may mean the POST was processed', () => {
    for (const status of [300, 301, 302, 307, 308]) expect(classifyHttpStatus(status)).toBe('permanent');
    for (const status of [303, 304, 305, 306, 309, 100, 101, 199, 600, 999]) expect(classifyHttpStatus(status)).toBe('in_doubt');
  });
});

describe('HTTP transport error table', () => {
  it('before the request was written: every connect and exchange code is retryable and safe to fall back', () => {
    for (const [code, phase] of Object.entries(HTTP_ERROR_TABLE)) {
      if (phase === 'invalid') continue;
      expect(classifyHttpError(code, false), code).toEqual({ outcome: 'retry', safeToFallback: true });
    }
  });

  it('after the request was written: every code is in doubt, whatever its phase', () => {
    for (const code of Object.keys(HTTP_ERROR_TABLE)) {
      expect(classifyHttpError(code, true), code).toEqual({ outcome: 'in_doubt', safeToFallback: false });
    }
  });

  it('requests undici or Node refused to build are permanent', () => {
    const invalid = Object.entries(HTTP_ERROR_TABLE).filter(([, phase]) => phase === 'invalid').map(([code]) => code);
    expect(invalid).toEqual(expect.arrayContaining(['UND_ERR_INVALID_ARG', 'ERR_INVALID_URL', 'ERR_INVALID_HTTP_TOKEN', 'ERR_ACCESS_DENIED']));
    for (const code of invalid) expect(classifyHttpError(code, false), code).toEqual({ outcome: 'permanent', safeToFallback: false });
  });
});

describe('SMTP reply code table', () => {
  it('every listed reply code classifies as its row says, in every phase', () => {
    for (const [reply, outcome] of Object.entries(SMTP_REPLY_TABLE)) {
      for (const phase of ['connect', 'envelope', 'data'] as const) {
        expect(classifySmtpError({ code: 'EENVELOPE', responseCode: Number(reply) }, phase).outcome, `${reply} in ${phase}`).toBe(outcome);
      }
    }
  });

  it('class rule: 4yz retry, 5yz permanent (with the listed exceptions)', () => {
    for (const reply of [432, 450, 451, 452, 454, 455, 471]) {
      expect(classifySmtpError({ responseCode: reply }, 'envelope'), String(reply)).toEqual({ outcome: 'retry', safeToFallback: true });
    }
    for (const reply of [500, 501, 502, 504, 521, 530, 534, 535, 538, 550, 551, 553, 555, 556]) {
      expect(classifySmtpError({ responseCode: reply }, 'envelope').outcome, String(reply)).toBe('permanent');
    }
    expect(classifySmtpError({ responseCode: 421 }, 'connect').outcome).toBe('retry');
    expect(classifySmtpError({ responseCode: 503 }, 'envelope').outcome).toBe('retry');
    expect(classifySmtpError({ responseCode: 552 }, 'envelope').outcome).toBe('retry');
  });

  it('a retry reply after the content was sent is not marked safe to fall back', () => {
    for (const reply of [421, 450, 451, 452, 552]) {
      expect(classifySmtpError({ responseCode: reply }, 'data'), String(reply)).toEqual({ outcome: 'retry', safeToFallback: false });
    }
  });

  it('a reply code outside 4yz/5yz does not decide: the error code and phase do', () => {
    expect(classifySmtpError({ code: 'EPROTOCOL', responseCode: 250 }, 'data')).toEqual({ outcome: 'in_doubt', safeToFallback: false });
    expect(classifySmtpError({ code: 'EPROTOCOL', responseCode: 354 }, 'envelope')).toEqual({ outcome: 'retry', safeToFallback: true });
  });
});

describe('SMTP error code table (no reply code)', () => {
  it('every row by kind: transport follows the phase, permanent is permanent, retry is retry', () => {
    for (const [code, kind] of Object.entries(SMTP_ERROR_TABLE)) {
      const before = classifySmtpError({ code }, 'envelope');
      const after = classifySmtpError({ code }, 'data');
      if (kind === 'permanent') {
        expect(before, code).toEqual({ outcome: 'permanent', safeToFallback: false });
        expect(after, code).toEqual({ outcome: 'permanent', safeToFallback: false });
      } else if (kind === 'retry') {
        expect(before, code).toEqual({ outcome: 'retry', safeToFallback: true });
        expect(after, code).toEqual({ outcome: 'retry', safeToFallback: false });
      } else {
        expect(before, code).toEqual({ outcome: 'retry', safeToFallback: true });
        expect(after, code).toEqual({ outcome: 'in_doubt', safeToFallback: false });
      }
    }
  });

  it('the wrapped system code is used when nodemailer gave none of its own', () => {
    expect(classifySmtpError({ originalCode: 'ECONNREFUSED' }, 'connect')).toEqual({ outcome: 'retry', safeToFallback: true });
    expect(classifySmtpError({ code: 'SOMETHING_NEW', originalCode: 'EAUTH' }, 'connect').outcome).toBe('permanent');
  });
});

describe('log provider table', () => {
  it('every listed open failure is retryable and safe; anything else in doubt', () => {
    for (const code of Object.keys(LOG_ERROR_TABLE)) expect(classifyLogError(code), code).toEqual({ outcome: 'retry', safeToFallback: true });
    for (const code of ['ENOSPC', 'EIO', 'EDQUOT', 'EFBIG', 'UNKNOWN']) expect(classifyLogError(code), code).toEqual({ outcome: 'in_doubt', safeToFallback: false });
  });
});

describe('verdicts become the core error classes', () => {
  it('retry carries Retry-After and safeToFallback; the others are their own classes', () => {
    const retry = errorFor({ outcome: 'retry', safeToFallback: false }, 'busy', 'HTTP_503', { retryAfterMs: 7000 });
    expect(retry).toBeInstanceOf(RetryableError);
    expect(retry).toMatchObject({ retryAfterMs: 7000, safeToFallback: false, code: 'HTTP_503' });
    expect(errorFor({ outcome: 'permanent', safeToFallback: false }, 'x', 'HTTP_422')).toBeInstanceOf(PermanentError);
    expect(errorFor({ outcome: 'in_doubt', safeToFallback: false }, 'x', 'NO_PROVIDER_ID')).toBeInstanceOf(InDoubtError);
  });
});

describe('backoff: schedule, full jitter, Retry-After, cap', () => {
  const schedule = [1000, 5000, 20000];
  it('full jitter: between 1 ms and the scheduled delay, the last entry repeating', () => {
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, random: () => 0 })).toBe(1);
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, random: () => 0.999999 })).toBe(1000);
    expect(retryDelayMs({ attempt: 2, scheduleMs: schedule, random: () => 0.5 })).toBe(2501);
    expect(retryDelayMs({ attempt: 9, scheduleMs: schedule, random: () => 0.999999 })).toBe(20000);
  });
  it('Retry-After is a floor, in seconds or as an HTTP date', () => {
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, retryAfterMs: parseRetryAfter('30'), random: () => 0 })).toBe(30_000);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:01:00 GMT', now)).toBe(60_000);
  });
  it('the cap wins over the schedule and over Retry-After', () => {
    expect(retryDelayMs({ attempt: 3, scheduleMs: schedule, capMs: 4000, random: () => 0.999999 })).toBe(4000);
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, capMs: 4000, retryAfterMs: 3_600_000 })).toBe(4000);
  });
});
