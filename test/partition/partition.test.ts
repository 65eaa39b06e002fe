import { afterAll, describe, expect, it } from 'vitest';
import { gatherEvidence } from '../chaos/evidence';
import { clearLeftovers, netnsUnavailableReason, type NetnsLab } from './netns';
import { checkPartition } from './partition-check';
import { drive, setUp } from './partition-run';

// Redis in the root namespace; ingest, decision and a good delivery process in
// one namespace; the victim delivery process in another, with one veth link to
// Redis and another to the provider. The victim's Redis link is slowed, then
// cut while it holds claims whose sends are done, then healed: its late
// commits must be fenced off, its operations completed by the good process,
// nothing sent twice, nothing lost.
const print = (text: string) => process.stdout.write(`${text}\n`);
const unavailable = netnsUnavailableReason();
if (unavailable) print(`[partition] skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('partition on real interfaces (network namespaces, veth, tc)', () => {
  const closers: Array<() => unknown> = [];
  let lab: NetnsLab | undefined;

  afterAll(async () => {
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch {
        // Teardown goes on: one stuck piece must not leave the namespaces behind.
      }
    }
    const left = lab?.remaining() ?? [];
    if (left.length > 0) print(`[partition] could not remove: ${left.join(', ')}`);
    expect(left).toEqual([]);
  });

  it('fences the partitioned worker off; every operation is sent exactly once, elsewhere', async () => {
    const cleared = clearLeftovers();
    if (cleared.length > 0) print(`[partition] removed leftovers of earlier runs: ${cleared.join(', ')}`);
    const started = Date.now();
    // Known before the set-up can fail half-way, so afterAll checks its cleanup either way.
    const base = await setUp(closers, (made) => (lab = made));
    const run = await drive(base, closers);
    const verdict = await checkPartition(run);

    const lines = [`[partition] ${run.lab.prefix} on 10.231.${run.lab.subnet}.0/24, ${((Date.now() - started) / 1000).toFixed(1)} s`, ...run.phases.map((p) => `  ${p}`)];
    lines.push(`  summary ${JSON.stringify(verdict.summary)}`);
    for (const v of verdict.violations) lines.push(`  VIOLATION ${v}`);
    if (verdict.violations.length > 0) {
      for (const key of verdict.check.suspects.slice(0, 3)) lines.push(...(await gatherEvidence(run.rt, run.sink, key, started)).map((l) => `  ${l}`));
      lines.push(`  victim log tail:\n${run.apps.victim.tail()}`);
    }
    print(lines.join('\n'));

    expect(verdict.violations).toEqual([]);
    expect(verdict.summary.duplicates).toBe(0);
    expect(verdict.summary.lost).toBe(0);
    expect(verdict.summary.sent).toBe(verdict.summary.operations);
    expect(verdict.summary.victimClaimsAtCut).toBeGreaterThan(0);
    expect(verdict.summary.fencedCommits).toBeGreaterThanOrEqual(Math.max(1, verdict.summary.victimAnsweredDuringCut));
    // Every wait inside is bounded on its own; this only stops a run that hangs in teardown.
  }, 600_000);
});
