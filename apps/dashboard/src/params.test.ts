import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from './errors';
import { JOURNAL_DEFAULT_WINDOW_MS, hexKeySchema, instantSchema, journalQuerySchema, parseInput } from './params';

describe('admin API input', () => {
  it('parses instants given as epoch milliseconds or ISO 8601 with a zone', () => {
    expect(instantSchema.parse('1700000000000')).toBe(1_700_000_000_000);
    expect(instantSchema.parse('2025-01-31T12:00:00Z')).toBe(Date.UTC(2025, 0, 31, 12));
    expect(instantSchema.parse('2025-01-31T13:00:00+01:00')).toBe(Date.UTC(2025, 0, 31, 12));
    for (const bad of ['yesterday', '2025-01-31', '2025-01-31T12:00:00', '-5', '1.5', '']) expect(instantSchema.safeParse(bad).success, bad).toBe(false);
  });

  it('defaults the journal window to the last hour and checks its order and limit', () => {
    const q = journalQuerySchema.parse({ to: '1700000000000' });
    expect(q).toEqual({ from: 1_700_000_000_000 - JOURNAL_DEFAULT_WINDOW_MS, to: 1_700_000_000_000, limit: 100 });
    expect(journalQuerySchema.safeParse({ from: '2', to: '1' }).success).toBe(false);
    expect(journalQuerySchema.safeParse({ limit: '10001' }).success).toBe(false);
    expect(journalQuerySchema.safeParse({ other: '1' }).success).toBe(false);
  });

  it('throws a 400 listing every problem by where it was', () => {
    const schema = z.strictObject({ key: hexKeySchema });
    let error: unknown;
    try {
      parseInput(schema, { key: 'XYZ' }, 'path');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_REQUEST', details: [{ path: 'path.key', message: expect.stringContaining('64') }] });
    expect(parseInput(schema, { key: 'a'.repeat(64) }, 'path')).toEqual({ key: 'a'.repeat(64) });
  });
});
