import type { CallContext, CallerCancel } from '@singleshot/providers';
import { redisRefusals } from '@singleshot/store';

/**
 * Keeps an operation's lease alive while a send runs (docs/protocol.md invariant 10). Extends
 * every third of the lease (the first time between a sixth and a third after
 * the claim, see `Ticker`); when an extension is refused (a later claim exists) or
 * fails for longer than the lease, it aborts `signal` so the holder stops: a
 * holder that lost its lease must not commit, and should not keep a provider
 * call running for nothing.
 */
export interface LeaseKeeper {
  readonly signal: AbortSignal;
  /** Ms left before the lease ends, as far as this holder knows. */
  remainingMs(): number;
  lost(): boolean;
  stop(): void;
  /**
   * The context of one provider call under this lease: cancelled when the
   * lease is lost, through `cancel` for a transport that takes a callback and
   * through `signal` (made on first read) for any other. Its deadline is a
   * moment (`endsAt`), not a duration: a call that starts late gets less.
   */
  callContext(timeoutMs: number): CallContext;
}

class KeeperCallContext implements CallContext {
  readonly endsAt: number;

  constructor(
    private readonly keeper: Keeper,
    public timeoutMs: number,
    now: number,
  ) {
    this.endsAt = now + timeoutMs;
  }

  get signal(): AbortSignal {
    return this.keeper.signal;
  }

  get cancel(): CallerCancel {
    return this.keeper;
  }
}

interface KeepLeaseInput {
  leaseMs: number;
  /**
   * When the claim that started the lease was sent. The lease runs from the
   * moment Redis ran the claim, which is before its answer was read: a holder
   * paused in between must not believe it still has a full lease.
   */
  startedAt?: number;
  extend: () => Promise<boolean>;
  now?: () => number;
  onLost?: (reason: string) => void;
}

/**
 * One interval per extension period for every lease of the process, ticking
 * twice per period. Most sends end in milliseconds: arming and clearing a
 * timer (and its closures) per claim would be work for nothing. A keeper extends
 * on every second tick it sees, so its first extension comes between half a
 * period and a period after the claim (a third of the lease at the latest),
 * then once per period; a lease that ran out while an extension hangs
 * is noticed within half a period.
 */
class Ticker {
  private readonly keepers = new Set<Keeper>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly halfPeriodMs: number) {}

  add(keeper: Keeper): void {
    this.keepers.add(keeper);
    if (!this.timer) {
      this.timer = setInterval(tickAll, this.halfPeriodMs, this.keepers);
      this.timer.unref();
    }
  }

  delete(keeper: Keeper): void {
    this.keepers.delete(keeper);
    if (this.keepers.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

function tickAll(keepers: Set<Keeper>): void {
  for (const keeper of keepers) keeper.tick();
}

const tickers = new Map<number, Ticker>();

function tickerFor(periodMs: number): Ticker {
  let ticker = tickers.get(periodMs);
  if (!ticker) {
    ticker = new Ticker(Math.max(1, Math.floor(periodMs / 2)));
    tickers.set(periodMs, ticker);
  }
  return ticker;
}

class Keeper implements LeaseKeeper, CallerCancel {
  private readonly now: () => number;
  private leaseUntil: number;
  private stopped = false;
  private inFlight = false;
  private ticks = 0;
  private lostWhy: Error | undefined;
  private cancelListener: ((reason: Error) => void) | undefined;
  // Made when someone asks for the signal (every send does; a claim that ends before one does not).
  private controller: AbortController | undefined;

  constructor(
    private readonly input: KeepLeaseInput,
    private readonly ticker: Ticker,
  ) {
    this.now = input.now ?? Date.now;
    this.leaseUntil = (input.startedAt ?? this.now()) + input.leaseMs;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lostWhy) this.controller.abort(this.lostWhy);
    }
    return this.controller.signal;
  }

  remainingMs(): number {
    return this.leaseUntil - this.now();
  }

  lost(): boolean {
    return this.lostWhy !== undefined;
  }

  callContext(timeoutMs: number): CallContext {
    // The wall clock, as startDeadline reads it when the call starts.
    return new KeeperCallContext(this, timeoutMs, Date.now());
  }

  cancelled(): Error | undefined {
    return this.lostWhy;
  }

  onCancel(listener: (reason: Error) => void): void {
    if (this.lostWhy) listener(this.lostWhy);
    else this.cancelListener = listener;
  }

  offCancel(listener: (reason: Error) => void): void {
    if (this.cancelListener === listener) this.cancelListener = undefined;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ticker.delete(this);
  }

  tick(): void {
    if (this.stopped) return;
    if (this.inFlight) {
      // An extension that never answers (the client connection queues commands
      // while Redis is away) must not keep a holder alive past its lease.
      if (this.now() >= this.leaseUntil) this.lose('lease ran out while an extension did not answer');
      return;
    }
    if (++this.ticks % 2 !== 0) return;
    this.inFlight = true;
    const startedAt = this.now();
    this.input
      .extend()
      .then((ok) => {
        redisRefusals.succeeded();
        if (this.stopped) return;
        if (ok) this.leaseUntil = startedAt + this.input.leaseMs;
        else this.lose('a later claim holds the operation');
      })
      .catch((err: unknown) => {
        // Extensions already come once per period: a refusal only joins the
        // process's backoff (its gauge, /readyz) and is tried again next period.
        redisRefusals.noteError(err);
        // Redis unreachable or refusing: the lease may still be ours until it runs out.
        if (!this.stopped && this.now() >= this.leaseUntil) this.lose('lease ran out while Redis was unreachable');
      })
      .finally(() => {
        this.inFlight = false;
      });
  }

  private lose(reason: string): void {
    if (this.lostWhy) return;
    this.lostWhy = new Error(`lease lost: ${reason}`);
    this.controller?.abort(this.lostWhy);
    const listener = this.cancelListener;
    this.cancelListener = undefined;
    listener?.(this.lostWhy);
    this.input.onLost?.(reason);
  }
}

/** Starts keeping the lease of one claim; `stop()` it when the attempt ends. */
export function keepLease(input: KeepLeaseInput): LeaseKeeper {
  const ticker = tickerFor(Math.max(100, Math.floor(input.leaseMs / 3)));
  const keeper = new Keeper(input, ticker);
  ticker.add(keeper);
  return keeper;
}
