import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@singleshot/store';
import type { SinkRequest } from '@singleshot/test-harness';
import { oneEffectProblems, type EffectEvidence } from './one-effect';

const key = 'k'.repeat(64);
const post = (seq: number, body = '{"text":"Order 1"}'): SinkRequest => ({
  seq, method: 'POST', path: '/send', idempotencyKey: key, headers: {}, body: JSON.parse(body), rawBody: body, recipient: 'r1@race.test', behaviour: 'ok', receivedAt: seq,
});
const step = (attempt: number, r: Partial<AttemptRecord>): AttemptRecord => ({ at: attempt, attempt, fence: String(attempt), outcome: 'sent', ...r });
const inDoubt = (attempt: number) => step(attempt, { step: 'send', outcome: 'in_doubt', errorCode: 'DEADLINE' });
const notFound = (attempt: number) => step(attempt, { step: 'reconcile', outcome: 'failed', errorCode: 'NOT_FOUND_ON_LOOKUP' });

/**
 * The shape of a run under load: attempt 1's POST timed out after it was written, attempt 2's
 * lookup was answered "not found" before the provider read that POST, attempt 2 sent again
 * (in doubt too), attempt 3's lookup found the first: two POSTs, one effect.
 */
function lateFirstPost(): EffectEvidence {
  return {
    key,
    record: { operationKey: key, status: 'sent', fence: '3', attempts: 3, externalId: 'sink-31' } as EffectEvidence['record'],
    history: [inDoubt(1), notFound(2), inDoubt(2), step(3, { step: 'reconcile', outcome: 'sent', externalId: 'sink-31' })],
    posts: [post(31), post(91)],
    accepted: { id: 'sink-31', count: 2, body: {} },
    lookups: [{ key, found: false }, { key, found: true }],
  };
}

describe('one effect per operation at an idempotent provider', () => {
  it('accepts a repeat under the same key after an in-doubt attempt whose lookup came before the provider read the first request', () => {
    expect(oneEffectProblems(lateFirstPost())).toEqual([]);
  });

  it('accepts one POST, one acceptance', () => {
    const e: EffectEvidence = { ...lateFirstPost(), history: [step(1, { step: 'send', externalId: 'sink-31' })], posts: [post(31)], accepted: { id: 'sink-31', count: 1, body: {} }, lookups: [] };
    expect(oneEffectProblems(e)).toEqual([]);
  });

  it('flags a resend after a doubt without a lookup', () => {
    const e = { ...lateFirstPost(), history: [inDoubt(1), step(2, { step: 'send', externalId: 'sink-31' })], lookups: [] };
    expect(oneEffectProblems(e)).toEqual([
      `${key.slice(0, 12)}: accepted 2 times after 0 lookups answered "not found"`,
      `${key.slice(0, 12)}: attempt 2 sent while an earlier attempt's doubt stood, without a lookup`,
    ]);
  });

  it('flags a second acceptance no "not found" lookup explains (a holder whose POST is not in the history)', () => {
    const e: EffectEvidence = { ...lateFirstPost(), history: [step(1, { step: 'send', externalId: 'sink-31' })], lookups: [{ key, found: true }] };
    expect(oneEffectProblems(e)).toEqual([`${key.slice(0, 12)}: accepted 2 times after 0 lookups answered "not found"`]);
  });

  it('flags a send after an attempt that was sent', () => {
    const e = { ...lateFirstPost(), history: [step(1, { step: 'send', externalId: 'sink-31' }), notFound(2), step(2, { step: 'send', externalId: 'sink-31' })] };
    expect(oneEffectProblems(e)).toEqual([`${key.slice(0, 12)}: attempt 1 was sent, and a later attempt sent again`]);
  });

  it('flags two messages under one key, and an operation whose id is not the provider\'s', () => {
    const e: EffectEvidence = { ...lateFirstPost(), posts: [post(31), post(91, '{"text":"Order 2"}')], record: { ...lateFirstPost().record, externalId: 'sink-91' } as EffectEvidence['record'] };
    expect(oneEffectProblems(e)).toEqual([
      `${key.slice(0, 12)}: sent with id sink-91, the provider's is sink-31`,
      `${key.slice(0, 12)}: 2 different messages under one idempotency key`,
    ]);
  });
});
