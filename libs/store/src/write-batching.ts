import type { Socket } from 'node:net';
import type { Cluster, Redis } from 'ioredis';

const BATCHED = Symbol('singleshot.batchedWrites');
const TURN_END = Symbol('singleshot.writeTurnEnd');

type BatchedSocket = Socket & { [BATCHED]?: true; [TURN_END]?: (fn: () => void) => void };

/**
 * Sends all commands a connection writes in one event-loop turn with one
 * syscall: the turn's first write corks the socket, a `setImmediate` uncorks
 * it (one `writev`). Socket writes were the largest single cost of an ingest
 * request (many concurrent requests, each writing its own commands). Unlike
 * ioredis's autoPipelining, which crashed ingest when a pipeline failed on a
 * dropped connection, ioredis's command bookkeeping is untouched: only the
 * kernel sees fewer, larger writes. A socket that closes while corked drops the
 * batch exactly as it would drop unsent kernel buffers, and ioredis fails or
 * resends those commands as for any dropped connection.
 */
export function batchSocketWrites(redis: Redis): void {
  redis.on('connect', () => {
    const stream = (redis as unknown as { stream?: BatchedSocket }).stream;
    if (!stream || stream[BATCHED]) return;
    stream[BATCHED] = true;
    const write = stream.write;
    let corked = false;
    let atEnd: Array<() => void> = [];
    const flush = () => {
      // Run while still corked: what they write joins this turn's writev. One
      // that waits for the turn's end while these run is run too, never left
      // for a turn that may not come.
      while (atEnd.length > 0) {
        const callbacks = atEnd;
        atEnd = [];
        for (const fn of callbacks) runSafely(fn);
      }
      corked = false;
      if (!stream.destroyed) stream.uncork();
    };
    const openTurn = () => {
      if (!corked && !stream.destroyed) {
        corked = true;
        stream.cork();
        setImmediate(flush);
      }
    };
    stream.write = function batchedWrite(this: Socket, ...args: Parameters<Socket['write']>): boolean {
      openTurn();
      return write.apply(this, args);
    } as Socket['write'];
    stream[TURN_END] = (fn) => {
      openTurn();
      // Corked now, or destroyed: a destroyed socket's turn still ends (flush runs), or this runs now.
      if (corked) atEnd.push(fn);
      else runSafely(fn);
    };
  });
}

/**
 * Runs `fn` at the end of the connection's current write turn, just before
 * what the turn wrote goes out (batchSocketWrites), so that what `fn` writes
 * travels with it: no later than a write made now would have gone. False when
 * the connection does not batch its writes (a cluster client, or not connected
 * yet): the caller picks another moment.
 */
export function atWriteTurnEnd(redis: Redis | Cluster, fn: () => void): boolean {
  const stream = (redis as unknown as { stream?: BatchedSocket }).stream;
  const turnEnd = stream?.[TURN_END];
  if (!turnEnd || stream.destroyed) return false;
  turnEnd(fn);
  return true;
}

function runSafely(fn: () => void): void {
  try {
    fn();
  } catch {
    // The callbacks settle their own callers (ScriptBatch): nothing thrown here belongs to the socket.
  }
}
