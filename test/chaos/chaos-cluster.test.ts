import { describe, expect, it } from 'vitest';
import { PROXY_FAULTS } from './fault-schedule';
import { SINK_FAULTS } from './chaos-sink';
import { formatReport } from './report';
import { runChaos } from './run-chaos';
import { chaosSeed } from './seed';

// The bounded chaos run on a local Redis Cluster (3 masters + 3 replicas;
// needs `node tools/build.mjs`: the fleet runs dist/apps/cli/main.js). The same
// workload and worker faults as chaos.test.ts; instead of Redis kills, masters
// are SIGKILLed (a replica is promoted, the old master rejoins as a replica)
// and SIGSTOPped past the node timeout (failed over while alive, it resumes as
// a replica), and the apps' links to one master misbehave. Each run takes a new
// seed (printed); CHAOS_SEED reruns a failing one.
const SEED = chaosSeed('bounded chaos, Redis Cluster');
const EVENTS = 300;

describe('chaos on a Redis Cluster (bounded)', () => {
  it(
    'through master failovers and faulty links to one master, every operation ends sent exactly once, or dead exactly when rejected',
    async () => {
      const result = await runChaos({ events: EVENTS, seed: SEED, cluster: true, ratePerSecond: 10, lateMs: 10_000 });
      const report = `\n${formatReport(result)}\n${result.timeline.join('\n')}\nreproduce: npm run chaos -- --cluster --events ${EVENTS} --seed ${SEED} --rate 10 --late-ms 10000`;

      expect(result.store).toBe('cluster');
      expect(result.violations, report).toEqual([]);
      expect(result.check.duplicates, report).toBe(0);
      expect(result.check.lost, report).toBe(0);
      expect(result.check.unexpected, report).toBe(0);
      expect(result.check.sent + result.check.dead + result.check.suppressed, report).toBe(result.check.operations);
      expect(result.check.dead, report).toBe(result.check.rejected);
      expect(result.check.rejected, report).toBeGreaterThan(0);
      expect(result.driver.acknowledged, report).toBe(EVENTS);

      // Every fault class was injected at least once (and carried out: a
      // failover that did not happen is a violation above).
      const injected = (prefix: string) => Object.entries(result.faults).filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
      expect(injected('kill-worker:'), report).toBeGreaterThan(0);
      expect(injected('stop-holder:'), report).toBeGreaterThan(0);
      expect(injected('kill-master'), report).toBeGreaterThan(0);
      expect(injected('stop-master'), report).toBeGreaterThan(0);
      expect(injected('kill-redis'), report).toBe(0);
      for (const fault of PROXY_FAULTS) expect(injected(`proxy:redis-master:${fault}`), `link to a master: ${fault}${report}`).toBeGreaterThan(0);
      for (const fault of PROXY_FAULTS) expect(injected(`proxy:provider:${fault}`), `provider link: ${fault}${report}`).toBeGreaterThan(0);
      for (const fault of [...SINK_FAULTS, 'reject-422'] as const) expect(result.sinkFaults[fault], `${fault}${report}`).toBeGreaterThan(0);
    },
    900_000,
  );
});
