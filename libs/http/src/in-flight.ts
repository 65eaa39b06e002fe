import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError } from './send-error';

/**
 * Load shedding: at most `max` requests are processed at once; the next one
 * is answered 503 with `Retry-After` right away, before its body is read, so
 * memory stays bounded however many clients arrive. A request counts until
 * its response is finished or its socket closes.
 */
export function inFlightLimit(max: number, retryAfterSeconds = 1, onShed?: () => void) {
  let current = 0;
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (current >= max) {
      onShed?.();
      res.setHeader('retry-after', String(retryAfterSeconds));
      res.setHeader('connection', 'close');
      sendError(res, 503, 'OVERLOADED', `more than ${max} requests in flight; retry later`);
      return;
    }
    current++;
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      current--;
    };
    res.once('finish', release);
    res.once('close', release);
    next();
  };
}
