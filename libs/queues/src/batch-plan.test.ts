import { describe, expect, it } from 'vitest';
import { sha256Hex } from '@singleshot/core';
import { planBatches, type BatchPlanSpec } from './batch-plan';

// The one planner of decide and deliver batches, as a pure function: items
// carry a key, a message key and a partition; the queues are partition names.
interface Item {
  key: string;
  messageKey: string;
  partition: number;
  plain?: boolean;
}

let round = 0;
/** `n` items of one fresh message, spread over `partitions` partitions in turn. */
function items(n: number, partitions = 1, extra: Partial<Item> = {}): Item[] {
  round++;
  const messageKey = sha256Hex(`message-${round}`);
  return Array.from({ length: n }, (_, i) => ({ key: sha256Hex(`item-${round}-${i}`), messageKey, partition: i % partitions, ...extra }));
}

const spec = (max: number): BatchPlanSpec<string, Item> => ({
  keyOf: (item) => item.key,
  queueOf: (item) => `queue-${item.partition}`,
  max,
  canBatch: (item) => item.plain !== false,
});

describe('planBatches', () => {
  it('an item alone keeps a job of its own', () => {
    const [one] = items(1);
    expect(planBatches([one!], spec(16))).toEqual({ singles: [one], batches: [] });
  });

  it("puts one queue's items in one batch whose id is the first message key, the chunk and a hash of the keys", () => {
    const list = items(3);
    const { singles, batches } = planBatches(list, spec(16));
    expect(singles).toEqual([]);
    expect(batches).toEqual([{ queue: 'queue-0', members: list, jobId: `${list[0]!.messageKey}-b0-${sha256Hex(list.map((i) => i.key).join(',')).slice(0, 16)}` }]);
    expect(batches[0]!.jobId).not.toContain(':');
  });

  it('plans an item handed in twice once', () => {
    const list = items(3);
    const { batches } = planBatches([...list, list[1]!], spec(16));
    expect(batches.map((b) => b.members)).toEqual([list]);
  });

  it('splits more than max evenly, every item in exactly one batch', () => {
    const list = items(40);
    const { singles, batches } = planBatches(list, spec(32));
    expect(singles).toEqual([]);
    expect(batches.map((b) => b.members.length)).toEqual([20, 20]);
    expect(batches.flatMap((b) => b.members)).toEqual(list);
    expect(new Set(batches.map((b) => b.jobId)).size).toBe(2);
  });

  it('a chunk of one is a single; max 1 turns batching off', () => {
    const list = items(3);
    expect(planBatches(list, spec(2)).batches.map((b) => b.members.length)).toEqual([2]);
    expect(planBatches(list, spec(2)).singles).toEqual([list[2]]);
    expect(planBatches(list, spec(1))).toEqual({ singles: list, batches: [] });
  });

  it('never mixes queues: a batch per partition queue', () => {
    const list = items(12, 4);
    const { singles, batches } = planBatches(list, spec(16));
    expect(singles).toEqual([]);
    expect(batches.map((b) => b.queue).sort()).toEqual(['queue-0', 'queue-1', 'queue-2', 'queue-3']);
    for (const b of batches) for (const item of b.members) expect(b.queue).toBe(`queue-${item.partition}`);
  });

  it('leaves an item that cannot be batched in a job of its own next to the batch of the others', () => {
    const list = items(2);
    const [odd] = items(1, 1, { plain: false });
    const { singles, batches } = planBatches([...list, odd!], spec(16));
    expect(singles).toEqual([odd]);
    expect(batches.map((b) => b.members)).toEqual([list]);
  });

  it('the same items make the same id; other companions make another (no item hides behind a batch it is not in)', () => {
    const list = [...items(2), ...items(2)];
    const id = (l: Item[]) => planBatches(l, spec(16)).batches[0]?.jobId;
    expect(id(list)).toBe(id([...list]));
    expect(id(list.slice(0, 3))).not.toBe(id(list));
    expect(id(list.slice(1))).not.toBe(id(list));
  });
});
