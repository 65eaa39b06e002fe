import { describe, expect, it } from 'vitest';
import { eventMessageKey, type DecideJobData } from '@singleshot/core';
import { createLogger } from '@singleshot/observability';
import { decideBatch, type DecideBatchDeps } from './decide-batch';
import type { DecideOutcome } from './decide';

// The batch handler's bookkeeping with the per-message decision stubbed out
// (the decision itself, on a real Redis with real workers, is in
// test/e2e/decide-batch.test.ts): who is decided, who gets a job of its own,
// and that every hand-off is in Redis before the batch completes.
const logger = createLogger({ app: 'test', level: 'silent' });

const message = (id: string): DecideJobData => ({
  messageKey: eventMessageKey('shop', id),
  firstArrivalAt: 1_700_000_000_000,
  via: 'api',
  input: { kind: 'event', source: 'shop', eventId: id, type: 'order.paid', recipients: ['a@example.com'], data: {} },
});

function harness(outcomes: Map<string, DecideOutcome | Error>, handOff: { fail?: Error } = {}) {
  const events: string[] = [];
  const deps: DecideBatchDeps = {
    decideOne: async (data) => {
      events.push(`decide ${data.input.kind === 'event' ? data.input.eventId : '?'}`);
      const o = outcomes.get(data.messageKey) ?? { operations: 1, redelivered: false };
      if (o instanceof Error) throw o;
      return o;
    },
    requeue: async (data) => {
      if (handOff.fail) throw handOff.fail;
      events.push(`requeue ${data.input.kind === 'event' ? data.input.eventId : '?'}`);
    },
    poison: async (_entry, index) => void events.push(`poison ${index}`),
    logger,
  };
  return { deps, events };
}

describe('decideBatch', () => {
  it('decides every message of the batch, counting those decided before', async () => {
    const list = [message('1'), message('2'), message('3')];
    const { deps, events } = harness(new Map([[list[1]!.messageKey, { operations: 1, redelivered: true }]]));
    const outcome = await decideBatch({ id: 'b1', data: { messages: list } }, deps);
    expect(outcome).toEqual({ kind: 'batch', messages: 3, decided: 2, redelivered: 1, requeued: 0, invalid: 0 });
    expect(events.sort()).toEqual(['decide 1', 'decide 2', 'decide 3']);
  });

  it('gives a message whose decision failed its own decide job, delayed, and completes for the others', async () => {
    const list = [message('ok'), message('bad')];
    const { deps, events } = harness(new Map([[list[1]!.messageKey, new TypeError('template threw')]]));
    const outcome = await decideBatch({ id: 'b2', data: { messages: list } }, deps);
    expect(outcome).toMatchObject({ decided: 1, requeued: 1 });
    expect(events).toContain('requeue bad');
  });

  it('throws when a failed message cannot be handed on (BullMQ retries the whole batch; nothing is dropped)', async () => {
    const list = [message('ok'), message('bad')];
    const down = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
    const { deps } = harness(new Map([[list[1]!.messageKey, new Error('Redis refused')]]), { fail: down });
    await expect(decideBatch({ id: 'b3', data: { messages: list } }, deps)).rejects.toBe(down);
  });

  it('hands an entry that is no decide job to a job of its own, where it fails with the reason; the others are decided', async () => {
    const list = [message('good'), { messageKey: 'not-hex', via: 'api' }];
    const { deps, events } = harness(new Map());
    const outcome = await decideBatch({ id: 'b4', data: { messages: list } }, deps);
    expect(outcome).toMatchObject({ messages: 2, decided: 1, invalid: 1 });
    expect(events.sort()).toEqual(['decide good', 'poison 1']);
  });

  it('a payload without a messages array is one invalid entry, never a silent success', async () => {
    const { deps, events } = harness(new Map());
    const outcome = await decideBatch({ id: 'b5', data: { nothing: true } }, deps);
    expect(outcome).toMatchObject({ messages: 1, decided: 0, invalid: 1 });
    expect(events).toEqual(['poison 0']);
  });
});
