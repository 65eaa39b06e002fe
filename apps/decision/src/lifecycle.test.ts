import { describe, expect, it } from 'vitest';
import type { DecideJobData, DeliverJobData } from '@singleshot/core';
import { settle, type LifecycleDeps } from './lifecycle';

const NOW = 1_700_000_000_000;
const data: DecideJobData = {
  messageKey: 'a'.repeat(64),
  firstArrivalAt: NOW,
  via: 'api',
  input: { kind: 'event', source: 'cal', eventId: 'e-1', type: 'reminder', recipients: ['a@x.test'], data: {}, sendAt: NOW + 300 },
};
const job = (operationKey: string, dueAt?: number): DeliverJobData =>
  ({ operationKey, messageKey: data.messageKey, route: 'r', action: 'notify:v1', recipient: `${operationKey}@x.test`, channel: 'webhook', subject: '', text: '', data: {}, firstArrivalAt: NOW, ...(dueAt !== undefined ? { dueAt } : {}) }) as DeliverJobData;

function fakeLifecycle(): { deps: LifecycleDeps; scheduled: Array<[string, number]> } {
  const scheduled: Array<[string, number]> = [];
  const deps: LifecycleDeps = {
    cancellations: {} as LifecycleDeps['cancellations'],
    async schedule(j, dueAt) {
      scheduled.push([j.operationKey, dueAt]);
      return true;
    },
    async enqueueLater() {},
    now: () => NOW,
  };
  return { deps, scheduled };
}

describe('settle', () => {
  it('schedules an operation due however soon ahead (never sent before its time), and sends one that is due now or past', async () => {
    const { deps, scheduled } = fakeLifecycle();
    const settled = await settle(data, [job('soon', NOW + 1), job('later', NOW + 5000), job('due', NOW), job('past', NOW - 10), job('now')], undefined, deps);
    expect(scheduled).toEqual([['soon', NOW + 1], ['later', NOW + 5000]]);
    expect(settled.later.map((l) => [l.job.operationKey, l.delayMs])).toEqual([['soon', 1], ['later', 5000]]);
    expect(settled.now.map((j) => j.operationKey)).toEqual(['due', 'past', 'now']);
  });
});
