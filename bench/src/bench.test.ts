import { describe, expect, it } from 'vitest';
import { measure } from './measure';
import { SYSTEMS } from './systems';

// The bench machinery at a tiny size: every system starts on its own store,
// the driver and sink count every (event, recipient) pair. Counts only; the
// figures themselves come from `npm run bench`. Needs `npm run build` first.
describe('bench machinery', () => {
  for (const system of SYSTEMS) {
    it(`${system.id}: every notification reaches the sink${system.exact ? ' exactly once' : ''}`, async () => {
      const m = await measure(system.id, { events: 30, recipients: 2, dup: 3, inFlight: 12 }, { concurrency: 4, appendfsync: 'everysec', drainSeconds: 60 });
      expect(m.expected).toBe(60);
      expect(m.lost).toBe(0);
      expect(m.notifications).toBe(60);
      expect(m.failedRequests).toBe(0);
      if (system.exact) expect(m.duplicates).toBe(0);
      if (system.store === 'redis') {
        expect(m.redis?.commandsPerNotification).toBeGreaterThan(0);
        // Every system's writes reach the AOF (appendonly yes): a zero means the watcher read nothing.
        expect(m.redis?.aofBytesPerNotification).toBeGreaterThan(0);
      }
      if (system.id.startsWith('singleshot')) expect(m.stages?.deliverRunMs.p50).toBeGreaterThanOrEqual(0);
    });
  }
});
