import { SingleshotError } from '@singleshot/core';
import type { CallContext, CallerCancel } from './provider';

/**
 * The reason a call was cut short. `DEADLINE`: our hard deadline passed;
 * `ABORTED`: the caller's signal fired (shutdown, lost lease). Either way the
 * error class is decided by how far the call got, not by this reason.
 */
export class CallAbortedError extends SingleshotError {}

/** Where a call learns that it must stop: the part of a Deadline an exchange needs. */
export interface CallCancel {
  /** The abort reason, once aborted. */
  reason(): Error | undefined;
  /** Runs `listener` once when the call is cut short; one listener per call (the last one set wins). */
  onAbort(listener: (reason: Error) => void): void;
}

export interface Deadline extends CallCancel {
  /**
   * Fires at the deadline or when the caller aborts, whichever comes first.
   * Made on first read: transports that take a callback (`onAbort`) never
   * pay for an AbortSignal (creating one cost more than the rest of the deadline).
   */
  readonly signal: AbortSignal;
  /** The effective budget in ms (min of the caller's and the provider's). */
  readonly ms: number;
  /** The abort reason as a CallAbortedError, once aborted. */
  reason(): CallAbortedError | undefined;
  /** Clears the timer and the listener on the caller's signal. Call in `finally`. */
  dispose(): void;
}

function fire(deadline: CallDeadline): void {
  deadline.abort(new CallAbortedError(`no answer within ${deadline.ms} ms`, 'DEADLINE'));
}

/**
 * One timer and one listener on the caller's cancellation (its `cancel`
 * callback when it has one, else its signal), and nothing else until someone
 * asks for `signal`. On a signal the object is its own event listener
 * (`handleEvent`); the timer gets it as an argument.
 */
class CallDeadline implements Deadline {
  private why: CallAbortedError | undefined;
  private listener: ((reason: Error) => void) | undefined;
  private controller: AbortController | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly caller: AbortSignal | undefined;
  private readonly cancel: CallerCancel | undefined;
  private readonly onCancel: ((reason: Error) => void) | undefined;

  constructor(ctx: CallContext, readonly ms: number) {
    if (ctx.cancel) {
      // The caller's callback instead of a listener on its signal (which then need not exist).
      const cancel = ctx.cancel;
      this.cancel = cancel;
      this.onCancel = (reason) => this.callerAborted(reason);
      const already = cancel.cancelled();
      if (already) this.callerAborted(already);
      else cancel.onCancel(this.onCancel);
    } else {
      const caller = ctx.signal;
      this.caller = caller;
      if (caller.aborted) this.handleEvent();
      else caller.addEventListener('abort', this, { once: true });
    }
    if (ms <= 0) this.abort(new CallAbortedError('deadline already passed', 'DEADLINE'));
    if (!this.why) this.timer = setTimeout(fire, ms, this);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.why) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** The caller's signal fired. */
  handleEvent(): void {
    this.callerAborted(this.caller?.reason);
  }

  private callerAborted(cause: unknown): void {
    this.abort(new CallAbortedError('call aborted by the caller', 'ABORTED', { cause }));
  }

  abort(err: CallAbortedError): void {
    if (this.why) return;
    this.why = err;
    clearTimeout(this.timer);
    this.controller?.abort(err);
    const listener = this.listener;
    this.listener = undefined;
    listener?.(err);
  }

  reason(): CallAbortedError | undefined {
    return this.why;
  }

  onAbort(listener: (reason: Error) => void): void {
    if (this.why) listener(this.why);
    else this.listener = listener;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.listener = undefined;
    this.caller?.removeEventListener('abort', this);
    if (this.onCancel) this.cancel?.offCancel(this.onCancel);
  }
}

/**
 * One deadline for one provider call: `min(ctx.timeoutMs, ctx.endsAt - now,
 * capMs)` plus the caller's signal (docs/protocol.md invariant 10: the lease
 * bounds the send). A budget of 0 or less is already expired, so the call
 * never starts: a holder that stalled between computing its budget and
 * starting the call (a GC pause, SIGSTOP) past `endsAt` does not send.
 */
export function startDeadline(ctx: CallContext, capMs: number, now: () => number = Date.now): Deadline {
  // A missing or non-finite budget from the caller must not mean "no deadline".
  const wanted = Number.isFinite(ctx.timeoutMs) ? ctx.timeoutMs : capMs;
  const left = ctx.endsAt === undefined ? wanted : Math.min(wanted, ctx.endsAt - now());
  return new CallDeadline(ctx, Math.max(0, Math.min(left, capMs)));
}
