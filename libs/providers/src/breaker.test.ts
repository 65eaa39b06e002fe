import { afterEach, describe, expect, it } from 'vitest';
import { BreakerRegistry, CircuitBreaker, breakerGaugeValue, type BreakerState } from './breaker';

let clock = 0;
const now = () => clock;
const created: { dispose(): void }[] = [];
afterEach(() => {
  for (const b of created.splice(0)) b.dispose();
  clock = 0;
});

function breaker(threshold = 3, cooldownMs = 1000, states: BreakerState[] = []): CircuitBreaker {
  const b = new CircuitBreaker({ failureThreshold: threshold, cooldownMs, now, onStateChange: (s) => states.push(s) });
  created.push(b);
  return b;
}

function fail(b: CircuitBreaker, times: number): void {
  for (let i = 0; i < times; i++) {
    const permit = b.acquire();
    if (!permit.allowed) throw new Error('expected a permit');
    b.record('failure', permit);
  }
}

describe('CircuitBreaker', () => {
  it('opens after N consecutive failures and then refuses at once, saying when to try again', () => {
    const states: BreakerState[] = [];
    const b = breaker(3, 1000, states);
    fail(b, 2);
    expect(b.state()).toBe('closed');
    fail(b, 1);
    expect(b.state()).toBe('open');
    clock = 400;
    expect(b.acquire()).toEqual({ allowed: false, retryInMs: 600 });
    expect(states).toEqual(['open']);
  });

  it('a success in between resets the count: failures must be consecutive', () => {
    const b = breaker(3);
    fail(b, 2);
    const permit = b.acquire();
    if (!permit.allowed) throw new Error('expected a permit');
    b.record('success', permit);
    fail(b, 2);
    expect(b.state()).toBe('closed');
    expect(b.consecutiveFailures()).toBe(2);
  });

  it('half-opens after the cooldown and lets exactly one trial through', () => {
    const states: BreakerState[] = [];
    const b = breaker(1, 1000, states);
    fail(b, 1);
    clock = 1000;
    expect(b.state()).toBe('half_open');
    const trial = b.acquire();
    expect(trial).toEqual({ allowed: true, trial: true });
    expect(b.acquire().allowed).toBe(false);
    expect(b.acquire().allowed).toBe(false);
    b.record('success', trial as { trial: boolean });
    expect(b.state()).toBe('closed');
    expect(b.acquire()).toEqual({ allowed: true, trial: false });
    expect(states).toEqual(['open', 'half_open', 'closed']);
  });

  it('a failed trial opens it again for a whole cooldown', () => {
    const b = breaker(2, 1000);
    fail(b, 2);
    clock = 1500;
    const trial = b.acquire();
    expect(trial).toEqual({ allowed: true, trial: true });
    b.record('failure', trial as { trial: boolean });
    expect(b.state()).toBe('open');
    clock = 2400;
    expect(b.acquire()).toEqual({ allowed: false, retryInMs: 100 });
    clock = 2500;
    expect(b.acquire()).toEqual({ allowed: true, trial: true });
  });

  it('an abandoned trial (our lease lost, shutdown) frees the trial slot and decides nothing', () => {
    const b = breaker(1, 1000);
    fail(b, 1);
    clock = 1000;
    const trial = b.acquire();
    b.record('abandoned', trial as { trial: boolean });
    expect(b.state()).toBe('half_open');
    expect(b.acquire()).toEqual({ allowed: true, trial: true });
  });

  it('moves the gauge to half-open when the cooldown passes, without traffic', async () => {
    const states: BreakerState[] = [];
    const b = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 30, onStateChange: (s) => states.push(s) });
    created.push(b);
    fail(b, 1);
    for (let i = 0; i < 100 && !states.includes('half_open'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(states).toEqual(['open', 'half_open']);
  });

  it('rejects nonsense options', () => {
    expect(() => new CircuitBreaker({ failureThreshold: 0, cooldownMs: 1 })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ failureThreshold: 1, cooldownMs: -1 })).toThrow(RangeError);
  });
});

describe('BreakerRegistry', () => {
  it('keeps one breaker per channel and provider and reports state changes with both names', () => {
    const seen: string[] = [];
    const registry = new BreakerRegistry({ failureThreshold: 1, cooldownMs: 1000, now, onStateChange: (c, p, s) => seen.push(`${c}/${p}=${breakerGaugeValue(s)}`) });
    created.push(registry);
    expect(registry.get('webhook', 'a')).toBe(registry.get('webhook', 'a'));
    expect(registry.get('webhook', 'a')).not.toBe(registry.get('email', 'a'));
    fail(registry.get('webhook', 'a'), 1);
    clock = 1000;
    expect(registry.snapshot()).toEqual([
      { channel: 'webhook', provider: 'a', state: 'half_open', failures: 1 },
      { channel: 'email', provider: 'a', state: 'closed', failures: 0 },
    ]);
    expect(seen).toEqual(['webhook/a=2', 'webhook/a=1']);
  });
});
