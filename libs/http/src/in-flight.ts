import type { ServerResponse } from 'node:http';
import { sendError } from './send-error';

const GATE = Symbol('inFlightGate');
/** A counted response remembers its gate until released (so a release happens once). */
type Counted = ServerResponse & { [GATE]?: InFlightGate | undefined };

// One listener function for every response, not a closure per request.
function releaseOnEvent(this: ServerResponse): void {
  const gate = (this as Counted)[GATE];
  if (gate) gate.leave(this);
}

/**
 * Load shedding: at most `max` requests are processed at once; the next one
 * is answered 503 with `Retry-After` right away, before its body is read, so
 * memory stays bounded however many clients arrive. A request counts until
 * its response is finished or its socket closes ('close' either way). One gate can serve several
 * request handlers (every ingest route shares one), so the cap holds for all
 * of them together.
 */
export class InFlightGate {
  private current = 0;

  constructor(
    readonly max: number,
    private readonly retryAfterSeconds = 1,
    private readonly onShed?: () => void,
  ) {}

  /** Requests counted now. */
  get inFlight(): number {
    return this.current;
  }

  /**
   * Counts `res` in, or answers it 503 OVERLOADED (with `Retry-After` and
   * `Connection: close`) and returns false when `max` are already in flight.
   */
  enter(res: ServerResponse): boolean {
    if (this.current >= this.max) {
      this.onShed?.();
      res.setHeader('retry-after', String(this.retryAfterSeconds));
      res.setHeader('connection', 'close');
      sendError(res, 503, 'OVERLOADED', `more than ${this.max} requests in flight; retry later`);
      return false;
    }
    this.current++;
    (res as Counted)[GATE] = this;
    // A response emits 'close' once it is finished and handed over, or when its
    // connection ends first: one listener covers both.
    res.once('close', releaseOnEvent);
    return true;
  }

  /** Counts `res` out, once (its 'close' does). */
  leave(res: ServerResponse): void {
    if ((res as Counted)[GATE] !== this) return;
    (res as Counted)[GATE] = undefined;
    this.current--;
  }
}
