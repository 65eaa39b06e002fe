import { describe, expect, it } from 'vitest';
import { budgetSpent, planChain, sinceLastReplay, type ChainHistoryEntry } from './fallback-chain';

const providers = ['a', 'b', 'c'];
const send = (provider: string, outcome: string): ChainHistoryEntry => ({ provider, outcome, step: 'send' });

describe('planChain', () => {
  it('a fresh operation tries the providers in configured order', () => {
    expect(planChain({ providers, history: [], perProviderAttempts: 2 })).toEqual({ order: ['a', 'b', 'c'], used: { a: 0, b: 0, c: 0 } });
  });

  it('a provider stays first until its budget is spent, then the next one leads', () => {
    const once = planChain({ providers, history: [send('a', 'failed')], perProviderAttempts: 2 });
    expect(once.order).toEqual(['a', 'b', 'c']);
    expect(budgetSpent(once, 'a', 2)).toBe(false);
    const twice = planChain({ providers, history: [send('a', 'failed'), send('a', 'failed')], perProviderAttempts: 2 });
    expect(twice.order).toEqual(['b', 'c']);
    expect(budgetSpent(twice, 'a', 2)).toBe(true);
  });

  it('starts over from the first provider once every budget is spent', () => {
    const history = ['a', 'b', 'c'].map((p) => send(p, 'failed'));
    expect(planChain({ providers, history, perProviderAttempts: 1 }).order).toEqual(['a', 'b', 'c']);
  });

  it('an unresolved in-doubt call pins the operation to that provider', () => {
    const plan = planChain({ providers, history: [send('a', 'failed'), send('b', 'in_doubt')], perProviderAttempts: 1 });
    expect(plan).toMatchObject({ order: ['b'], pinnedTo: 'b' });
  });

  it('a lookup that said "not there" resolves the doubt and fallback is allowed again', () => {
    const history = [send('a', 'in_doubt'), { provider: 'a', outcome: 'failed', step: 'reconcile' }];
    const plan = planChain({ providers, history, perProviderAttempts: 1 });
    expect(plan.pinnedTo).toBeUndefined();
    expect(plan.order).toEqual(['b', 'c']);
    // The in-doubt call counted against a's budget; the reconcile record did not.
    expect(plan.used).toEqual({ a: 1, b: 0, c: 0 });
  });

  it('breaker skips and reconciliation errors are not provider calls', () => {
    const history = [
      { provider: 'a', outcome: 'failed', step: 'breaker_skip' },
      { provider: 'a', outcome: 'in_doubt', step: 'reconcile' },
    ];
    expect(planChain({ providers, history, perProviderAttempts: 1 })).toEqual({ order: ['a', 'b', 'c'], used: { a: 0, b: 0, c: 0 } });
  });

  it('records without a step count as provider calls', () => {
    expect(planChain({ providers, history: [{ provider: 'a', outcome: 'failed' }], perProviderAttempts: 1 }).order).toEqual(['b', 'c']);
  });

  it('a replay grants a fresh budget and forgets earlier doubts', () => {
    const history = [send('a', 'failed'), send('a', 'in_doubt'), { outcome: 'replayed', step: 'replay' }];
    expect(sinceLastReplay(history)).toEqual([]);
    expect(planChain({ providers, history, perProviderAttempts: 1 }).order).toEqual(['a', 'b', 'c']);
  });

  it('a provider no longer configured cannot pin the operation', () => {
    expect(planChain({ providers: ['b', 'c'], history: [send('a', 'in_doubt')], perProviderAttempts: 1 }).order).toEqual(['b', 'c']);
  });
});
