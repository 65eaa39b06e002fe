import { externalCode } from './error-codes';
import { describe, expect, it } from 'vitest';
import {
  InDoubtError,
  PermanentError,
  RetryableError,
  SingleshotError,
  ValidationError,
  classifyError,
  describeError,
} from './errors';

describe('error classes', () => {
  it('carry their class name and code', () => {
    const err = new PermanentError('mailbox unknown', 'SMTP_550');
    expect(err).toBeInstanceOf(SingleshotError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('PermanentError');
    expect(err.code).toBe('SMTP_550');
  });

  it('RetryableError defaults to not safe to fall back and keeps Retry-After and cause', () => {
    const cause = new Error('ECONNREFUSED');
    const err = new RetryableError('refused', externalCode('ECONNREFUSED'), { retryAfterMs: 1_500, cause });
    expect(err.safeToFallback).toBe(false);
    expect(err.retryAfterMs).toBe(1_500);
    expect(err.cause).toBe(cause);
    expect(new RetryableError('x', 'HTTP_503', { safeToFallback: true }).safeToFallback).toBe(true);
  });

  it('ValidationError has a default code', () => {
    expect(new ValidationError('bad', { path: 'a' }).code).toBe('INVALID_INPUT');
    expect(new ValidationError('bad', { path: 'a' }).details).toEqual({ path: 'a' });
    expect(new ValidationError('bad', undefined, 'INVALID_PROVIDER_CONFIG').code).toBe('INVALID_PROVIDER_CONFIG');
  });

  it('subclasses keep their own name', () => {
    class SmtpRejected extends PermanentError {}
    expect(new SmtpRejected('no', 'SMTP_550').name).toBe('SmtpRejected');
    expect(classifyError(new SmtpRejected('no', 'SMTP_550'))).toBe('permanent');
  });
});

describe('classifyError', () => {
  it('classifies by class, never by message text', () => {
    expect(classifyError(new PermanentError('try again later', 'SMTP_550'))).toBe('permanent');
    expect(classifyError(new InDoubtError('permanent failure', 'DEADLINE'))).toBe('in_doubt');
    expect(classifyError(new RetryableError('permanent', 'HTTP_503'))).toBe('retry');
  });

  it('treats unknown errors and non-errors as retryable', () => {
    expect(classifyError(new Error('permanent: invalid recipient'))).toBe('retry');
    expect(classifyError(new SingleshotError('superseded', 'UNKNOWN'))).toBe('retry');
    expect(classifyError('boom')).toBe('retry');
    expect(classifyError(undefined)).toBe('retry');
  });
});

describe('describeError', () => {
  it('describes singleshot errors by name, code and message', () => {
    expect(describeError(new InDoubtError('timeout after write', 'DEADLINE'))).toEqual({
      name: 'InDoubtError',
      code: 'DEADLINE',
      message: 'timeout after write',
    });
  });

  it('keeps a string code of a node error and marks others UNKNOWN', () => {
    const sys = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(describeError(sys)).toEqual({ name: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    const numeric = Object.assign(new TypeError('bad'), { code: 42 });
    expect(describeError(numeric)).toEqual({ name: 'TypeError', code: 'UNKNOWN', message: 'bad' });
  });

  it('describes thrown non-errors', () => {
    expect(describeError('plain string')).toEqual({ name: 'Error', code: 'UNKNOWN', message: 'plain string' });
    expect(describeError(null)).toEqual({ name: 'Error', code: 'UNKNOWN', message: 'null' });
  });

  it('is JSON-serializable', () => {
    const described = describeError(new RetryableError('later', 'HTTP_503', { retryAfterMs: 5 }));
    expect(JSON.parse(JSON.stringify(described))).toEqual(described);
  });
});
