import { describe, expect, it } from 'vitest';
import { checkRun, type CheckInput, type OperationState, type ProviderAcceptance } from './checker';
import { expectedOperations, planWorkload, type ExpectedOperation } from './workload';

// The checker must be able to fail: each rule is shown to fire on the smallest
// history that breaks it, and to stay quiet on a clean one.
const FROM = 1_000_000;
const TO = 1_060_000;

const good: ExpectedOperation = { key: 'a'.repeat(64), event: 0, recipient: 'u0-0@chaos.test', rejected: false };
const bad: ExpectedOperation = { key: 'b'.repeat(64), event: 0, recipient: 'reject-0@chaos.test', rejected: true };

function clean(): CheckInput & {
  states: Map<string, OperationState | null>;
  accepted: Map<string, ProviderAcceptance>;
  posted: Map<string, number>;
  terminalEntries: Map<string, Array<{ type: string; fence: string }>>;
} {
  return {
    expected: new Map([[good.key, good], [bad.key, bad]]),
    unacknowledged: new Map(),
    states: new Map<string, OperationState | null>([
      [good.key, { status: 'sent', updatedAt: TO - 10, externalId: 'sink-1', attempts: 2 }],
      [bad.key, { status: 'dead', updatedAt: TO + 500, reason: 'permanent', attempts: 1 }],
    ]),
    accepted: new Map([[good.key, { id: 'sink-1', count: 1, body: { operationKey: good.key, recipient: good.recipient } }]]),
    posted: new Map([[good.key, 2], [bad.key, 1]]),
    journal: { sent: 1, dead: 1, in_doubt: 1 },
    terminalEntries: new Map([
      [good.key, [{ type: 'sent', fence: '2' }]],
      [bad.key, [{ type: 'dead', fence: '1' }]],
    ]),
    faultWindow: { from: FROM, to: TO },
    boundMs: 10_000,
  };
}

describe('checkRun', () => {
  it('passes a clean history and reports its figures', () => {
    const report = checkRun(clean());
    expect(report.violations).toEqual([]);
    expect(report).toMatchObject({ operations: 2, rejected: 1, sent: 1, dead: 1, suppressed: 0, duplicates: 0, lost: 0, unexpected: 0, deadIsExactlyRejected: true });
    expect(report.slowestAfterFaultsMs).toBe(500);
    expect(report.terminalDuringFaults).toBe(1);
  });

  it('counts a second accepted POST under one key as a duplicate', () => {
    const input = clean();
    input.accepted.set(good.key, { id: 'sink-1', count: 2, body: { operationKey: good.key, recipient: good.recipient } });
    const report = checkRun(input);
    expect(report.duplicates).toBe(1);
    expect(report.violations.join('\n')).toMatch(/more than once/);
  });

  it('finds an operation recorded sent that the provider does not have (lost)', () => {
    const input = clean();
    input.accepted.delete(good.key);
    const report = checkRun(input);
    expect(report.lost).toBe(1);
    expect(report.violations.join('\n')).toMatch(/lost/);
  });

  it('finds an acknowledged event whose operation was never created (lost)', () => {
    const input = clean();
    input.states.set(good.key, null);
    input.accepted.delete(good.key);
    input.journal = { dead: 1 };
    input.terminalEntries.delete(good.key);
    const report = checkRun(input);
    expect(report.lost).toBe(1);
    expect(report.violations.join('\n')).toMatch(/no operation record/);
  });

  it('requires dead to be exactly the rejected recipients', () => {
    const input = clean();
    input.states.set(good.key, { status: 'dead', updatedAt: TO, reason: 'attempts_exhausted' });
    input.accepted.delete(good.key);
    input.journal = { dead: 2 };
    input.terminalEntries.set(good.key, [{ type: 'dead', fence: '5' }]);
    const report = checkRun(input);
    expect(report.deadIsExactlyRejected).toBe(false);
    expect(report.violations.join('\n')).toMatch(/should be sent ended dead/);
  });

  it('flags a rejected recipient that was sent, and its provider effect', () => {
    const input = clean();
    input.states.set(bad.key, { status: 'sent', updatedAt: TO, externalId: 'sink-2' });
    input.accepted.set(bad.key, { id: 'sink-2', count: 1, body: { operationKey: bad.key, recipient: bad.recipient } });
    input.journal = { sent: 2 };
    input.terminalEntries.set(bad.key, [{ type: 'sent', fence: '1' }]);
    const report = checkRun(input);
    expect(report.duplicates).toBe(1);
    expect(report.violations.join('\n')).toMatch(/did not end dead/);
  });

  it('flags provider effects for keys no event makes', () => {
    const input = clean();
    input.posted.set('c'.repeat(64), 1);
    input.accepted.set('c'.repeat(64), { id: 'sink-9', count: 1, body: {} });
    const report = checkRun(input);
    expect(report.unexpected).toBe(1);
  });

  it('flags operations that are not terminal and totals that do not add up', () => {
    const input = clean();
    input.states.set(good.key, { status: 'in_doubt', updatedAt: TO });
    input.journal = { dead: 1 };
    input.terminalEntries.delete(good.key);
    const report = checkRun(input);
    expect(report.notTerminal).toBe(1);
    expect(report.violations.join('\n')).toMatch(/sent \+ dead \+ suppressed/);
  });

  it('flags a second terminal journal entry for one operation (a replayed commit)', () => {
    const input = clean();
    input.journal = { sent: 2, dead: 1 };
    input.terminalEntries.set(good.key, [{ type: 'sent', fence: '2' }, { type: 'sent', fence: '2' }]);
    const report = checkRun(input);
    expect(report.violations.join('\n')).toMatch(/exactly one terminal entry/);
  });

  it('flags a last terminal state past the bound', () => {
    const input = clean();
    input.states.set(bad.key, { status: 'dead', updatedAt: TO + 20_000, reason: 'permanent' });
    expect(checkRun(input).violations.join('\n')).toMatch(/within the bound/);
  });

  it('flags a recorded external id that is not the provider\'s', () => {
    const input = clean();
    input.states.set(good.key, { status: 'sent', updatedAt: TO, externalId: 'sink-7' });
    expect(checkRun(input).violations.join('\n')).toMatch(/external id/);
  });
});

describe('planWorkload', () => {
  const options = { seed: 's1', events: 200, ratePerSecond: 20, lateMs: 10_000, rejectRatio: 0.1 };

  it('is a function of the seed', () => {
    expect(planWorkload(options)).toEqual(planWorkload(options));
    expect(planWorkload({ ...options, seed: 's2' }).sends).not.toEqual(planWorkload(options).sends);
  });

  it('sends every event 3 to 5 times, within the late bound, and names rejected recipients', () => {
    const plan = planWorkload(options);
    const perEvent = new Map<number, number[]>();
    for (const send of plan.sends) perEvent.set(send.event, [...(perEvent.get(send.event) ?? []), send.atMs]);
    expect(perEvent.size).toBe(200);
    for (const times of perEvent.values()) {
      expect(times.length).toBeGreaterThanOrEqual(3);
      expect(times.length).toBeLessThanOrEqual(5);
      expect(Math.max(...times) - Math.min(...times)).toBeLessThanOrEqual(10_000);
    }
    const ops = expectedOperations(plan.events);
    expect([...ops.values()].some((op) => op.rejected)).toBe(true);
    expect([...ops.values()].filter((op) => op.rejected).every((op) => op.recipient.startsWith('reject-'))).toBe(true);
  });
});
