import { describe, expect, it } from 'vitest';
import { CallLimit } from './call-limit';

// The process-wide bound on operations in flight, single jobs and batches alike.
describe('CallLimit', () => {
  it('never runs more than its maximum at once, and runs everything', async () => {
    const limit = new CallLimit(2);
    let running = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const tasks = Array.from({ length: 5 }, (_, i) =>
      limit.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((r) => gates.push(r));
        running--;
        return i;
      }),
    );
    for (let released = 0; released < 5; released++) {
      await waitFor(() => gates.length > 0);
      expect(limit.running).toBeLessThanOrEqual(2);
      gates.shift()!();
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    expect(limit.running).toBe(0);
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setImmediate(r));
  if (!check()) throw new Error('condition not reached');
}
