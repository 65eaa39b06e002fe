/**
 * Circuit breaker per provider, so a dead provider costs one fast skip instead
 * of a timeout per message. Closed: calls go through, consecutive failures are
 * counted; at `failureThreshold` it opens. Open: calls are refused until
 * `cooldownMs` passed; then half-open: exactly one trial call goes through, its
 * success closes the breaker, its failure opens it again for another cooldown.
 *
 * State lives in the process (one breaker per provider per delivery process):
 * each process finds out about a dead provider by itself, at the cost of
 * `failureThreshold` failed calls. Sharing it through Redis would add a round
 * trip to every send for little gain; the breaker only saves time, it never
 * decides whether a message is sent.
 */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** What a call told about the provider's health. */
export type BreakerVerdict =
  /** The provider answered (2xx, or a 4xx about this message): it is up. */
  | 'success'
  /** Refused, reset, timed out, 5xx, 429: it is down or overloaded. */
  | 'failure'
  /** The call was cut short by us (lost lease, shutdown): says nothing. */
  | 'abandoned';

export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  failureThreshold: number;
  /** How long it stays open before one trial call is let through. */
  cooldownMs: number;
  now?: () => number;
  onStateChange?: (state: BreakerState) => void;
}

export type BreakerPermit = { allowed: true; trial: boolean } | { allowed: false; retryInMs: number };

/** The value of `singleshot_provider_breaker_state` for a state. */
export function breakerGaugeValue(state: BreakerState): number {
  return state === 'closed' ? 0 : state === 'half_open' ? 1 : 2;
}

export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialInFlight = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: BreakerOptions) {
    if (!(options.failureThreshold >= 1)) throw new RangeError('failureThreshold must be >= 1');
    if (!(options.cooldownMs >= 0)) throw new RangeError('cooldownMs must be >= 0');
    this.now = options.now ?? Date.now;
  }

  /** The state now (an open breaker whose cooldown passed reads half-open). */
  state(): BreakerState {
    this.refresh();
    return this.current;
  }

  /**
   * Ms until an open breaker lets a trial through; 0 when a call may be tried
   * now (closed, or half-open). No side effect, unlike `acquire`.
   */
  openForMs(): number {
    this.refresh();
    return this.current === 'open' ? Math.max(1, this.openedAt + this.options.cooldownMs - this.now()) : 0;
  }

  consecutiveFailures(): number {
    return this.failures;
  }

  /** Asks to call the provider. A granted trial must be followed by `record`. */
  acquire(): BreakerPermit {
    this.refresh();
    switch (this.current) {
      case 'closed':
        return { allowed: true, trial: false };
      case 'open':
        return { allowed: false, retryInMs: Math.max(1, this.openedAt + this.options.cooldownMs - this.now()) };
      case 'half_open':
        if (this.trialInFlight) return { allowed: false, retryInMs: Math.max(1, Math.min(this.options.cooldownMs, 1000)) };
        this.trialInFlight = true;
        return { allowed: true, trial: true };
    }
  }

  /** Reports how a permitted call went. */
  record(verdict: BreakerVerdict, permit: { trial: boolean }): void {
    if (permit.trial) this.trialInFlight = false;
    if (verdict === 'abandoned') return;
    if (verdict === 'success') {
      // Any answer, even from a call started before the breaker opened, shows the provider is up.
      this.failures = 0;
      this.transition('closed');
      return;
    }
    this.failures += 1;
    if (permit.trial || (this.current === 'closed' && this.failures >= this.options.failureThreshold)) this.open();
  }

  /** Clears the half-open timer (tests, shutdown). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private open(): void {
    this.openedAt = this.now();
    this.transition('open');
    this.dispose();
    // Only to move the gauge to half-open without waiting for traffic.
    this.timer = setTimeout(() => this.refresh(), this.options.cooldownMs + 1);
    this.timer.unref();
  }

  private refresh(): void {
    if (this.current === 'open' && this.now() - this.openedAt >= this.options.cooldownMs) {
      this.trialInFlight = false;
      this.transition('half_open');
    }
  }

  private transition(next: BreakerState): void {
    if (next === this.current) return;
    this.current = next;
    if (next !== 'open') this.dispose();
    this.options.onStateChange?.(next);
  }
}

/** One breaker per channel and provider name, created on first use. */
export class BreakerRegistry {
  private readonly breakers = new Map<string, { channel: string; provider: string; breaker: CircuitBreaker }>();

  constructor(
    private readonly options: Omit<BreakerOptions, 'onStateChange'> & {
      onStateChange?: (channel: string, provider: string, state: BreakerState) => void;
    },
  ) {}

  get(channel: string, provider: string): CircuitBreaker {
    const id = `${channel}\u0000${provider}`;
    let entry = this.breakers.get(id);
    if (!entry) {
      const { onStateChange, ...rest } = this.options;
      const breaker = new CircuitBreaker({ ...rest, onStateChange: (state) => onStateChange?.(channel, provider, state) });
      entry = { channel, provider, breaker };
      this.breakers.set(id, entry);
    }
    return entry.breaker;
  }

  snapshot(): { channel: string; provider: string; state: BreakerState; failures: number }[] {
    return [...this.breakers.values()].map(({ channel, provider, breaker }) => ({
      channel,
      provider,
      state: breaker.state(),
      failures: breaker.consecutiveFailures(),
    }));
  }

  dispose(): void {
    for (const { breaker } of this.breakers.values()) breaker.dispose();
  }
}
