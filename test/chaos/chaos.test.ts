import { describe, expect, it } from 'vitest';
import { PROXY_FAULTS } from './fault-schedule';
import { SINK_FAULTS } from './chaos-sink';
import { formatReport } from './report';
import { runChaos } from './run-chaos';
import { chaosSeed } from './seed';

// The bounded chaos run of `npm test` (needs `node tools/build.mjs`: the fleet
// runs dist/apps/cli/main.js). 300 events, each sent 3–5 times over ~30 s,
// while workers are SIGKILLed every 2–10 s, a lock holder is SIGSTOPped past
// its lease, Redis is SIGKILLed and restarted on its AOF, and both the Redis
// and the provider links misbehave. Each run takes a new seed
// (printed); CHAOS_SEED reruns a failing one.
const SEED = chaosSeed('bounded chaos, one Redis');

describe('chaos (bounded)', () => {
  it(
    'every operation ends sent exactly once, or dead exactly when its recipient is rejected',
    async () => {
      const result = await runChaos({ events: 300, seed: SEED, ratePerSecond: 10, lateMs: 10_000 });
      const report = `\n${formatReport(result)}\nreproduce: npm run chaos -- --events 300 --seed ${SEED} --rate 10 --late-ms 10000`;

      expect(result.violations, report).toEqual([]);
      expect(result.check.duplicates, report).toBe(0);
      expect(result.check.lost, report).toBe(0);
      expect(result.check.unexpected, report).toBe(0);
      expect(result.check.sent + result.check.dead + result.check.suppressed, report).toBe(result.check.operations);
      expect(result.check.dead, report).toBe(result.check.rejected);
      expect(result.check.rejected, report).toBeGreaterThan(0);
      expect(result.driver.acknowledged, report).toBe(300);

      // The run was a chaos run: every kind of fault was injected at least once.
      const injected = (prefix: string) => Object.entries(result.faults).filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
      expect(injected('kill-worker:'), report).toBeGreaterThan(0);
      expect(injected('stop-holder:'), report).toBeGreaterThan(0);
      expect(injected('kill-redis'), report).toBeGreaterThan(0);
      for (const path of ['redis', 'provider']) for (const fault of PROXY_FAULTS) expect(injected(`proxy:${path}:${fault}`), `${path} ${fault}${report}`).toBeGreaterThan(0);
      for (const fault of [...SINK_FAULTS, 'reject-422'] as const) expect(result.sinkFaults[fault], `${fault}${report}`).toBeGreaterThan(0);
    },
    600_000,
  );
});
