import { describe, expect, it } from 'vitest';
import { AcceptedPrefix, Slots, commitOffsetAfter } from './kafka-progress';

describe('AcceptedPrefix', () => {
  it('grows only over an unbroken run from the start: the lowest record not done bounds it', () => {
    const prefix = new AcceptedPrefix(5);
    prefix.accept(1);
    prefix.accept(2);
    expect(prefix.length).toBe(0);
    prefix.accept(0);
    expect(prefix.length).toBe(3);
    prefix.accept(4);
    expect(prefix.length).toBe(3);
    expect(prefix.complete).toBe(false);
    prefix.accept(3);
    expect(prefix.length).toBe(5);
    expect(prefix.complete).toBe(true);
  });
});

describe('commitOffsetAfter', () => {
  const offsets = ['10', '11', '14'];
  it('is the offset after the last done record, nothing when none is done', () => {
    expect(commitOffsetAfter(offsets, 0, '15')).toBeUndefined();
    expect(commitOffsetAfter(offsets, 2, '15')).toBe('12');
  });
  it('passes the batch\'s trailing offsets (control records, compaction) once every record is done', () => {
    expect(commitOffsetAfter(offsets, 3, '15')).toBe('16');
  });
  it('keeps offsets beyond 2^53 exact', () => {
    expect(commitOffsetAfter(['9007199254740993'], 1, '9007199254740993')).toBe('9007199254740994');
  });
});

describe('Slots', () => {
  it('grants at most its size at once, in order, and gives up when the signal aborts', async () => {
    const slots = new Slots(2);
    const abort = new AbortController();
    expect(await slots.acquire(abort.signal)).toBe(true);
    expect(await slots.acquire(abort.signal)).toBe(true);
    const order: string[] = [];
    const third = slots.acquire(abort.signal).then((ok) => order.push(`third:${ok}`));
    const fourth = slots.acquire(abort.signal).then((ok) => order.push(`fourth:${ok}`));
    slots.release();
    await third;
    expect(order).toEqual(['third:true']);
    abort.abort();
    await fourth;
    expect(order).toEqual(['third:true', 'fourth:false']);
    expect(await slots.acquire(abort.signal)).toBe(false);
  });
});
