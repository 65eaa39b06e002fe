import { describe, expect, it } from 'vitest';
import { measureSource } from './sources';
import { SOURCE_KINDS } from './sources-table';

// The `--sources` machinery at a tiny size: each way in on its own origin and
// `singleshot start`, every event published twice, every (event, recipient)
// reaching the sink once. Counts only; the figures come from `npm run bench --
// --sources`. Needs `npm run build` first (the fleet is dist/apps/cli).
describe('bench sources rows', () => {
  for (const kind of SOURCE_KINDS) {
    it(`${kind}: every notification reaches the sink exactly once`, async () => {
      const row = await measureSource(kind, { events: 20, recipients: 2, batch: 10, concurrency: 4, appendfsync: 'everysec', drainSeconds: 60 });
      expect(row.expected).toBe(40);
      expect(row.lost).toBe(0);
      expect(row.duplicates).toBe(0);
      expect(row.eventsPerSecond).toBeGreaterThan(0);
    }, 240_000);
  }
});
