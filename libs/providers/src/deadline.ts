import { SingleshotError } from '@singleshot/core';
import type { CallContext } from './provider';

/**
 * The reason a call was cut short. `DEADLINE`: our hard deadline passed;
 * `ABORTED`: the caller's signal fired (shutdown, lost lease). Either way the
 * error class is decided by how far the call got, not by this reason.
 */
export class CallAbortedError extends SingleshotError {}

export interface Deadline {
  /** Fires at the deadline or when the caller aborts, whichever comes first. */
  readonly signal: AbortSignal;
  /** The effective budget in ms (min of the caller's and the provider's). */
  readonly ms: number;
  /** The abort reason as a CallAbortedError, once aborted. */
  reason(): CallAbortedError | undefined;
  /** Clears the timer and the listener on the caller's signal. Call in `finally`. */
  dispose(): void;
}

/**
 * One deadline for one provider call: `min(ctx.timeoutMs, capMs)` plus the
 * caller's signal (docs/protocol.md invariant 10: the lease bounds the send). A budget of 0 or
 * less is already expired, so the call never starts.
 */
export function startDeadline(ctx: CallContext, capMs: number): Deadline {
  // A missing or non-finite budget from the caller must not mean "no deadline".
  const wanted = Number.isFinite(ctx.timeoutMs) ? ctx.timeoutMs : capMs;
  const ms = Math.max(0, Math.min(wanted, capMs));
  const controller = new AbortController();
  let reason: CallAbortedError | undefined;
  const abort = (err: CallAbortedError) => {
    if (reason) return;
    reason = err;
    controller.abort(err);
  };
  const onCallerAbort = () =>
    abort(new CallAbortedError('call aborted by the caller', 'ABORTED', { cause: ctx.signal.reason }));
  const timer = setTimeout(() => abort(new CallAbortedError(`no answer within ${ms} ms`, 'DEADLINE')), ms);
  if (ctx.signal.aborted) onCallerAbort();
  else ctx.signal.addEventListener('abort', onCallerAbort, { once: true });
  if (ms <= 0) abort(new CallAbortedError('deadline already passed', 'DEADLINE'));
  return {
    signal: controller.signal,
    ms,
    reason: () => reason,
    dispose() {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onCallerAbort);
    },
  };
}
