import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';

const BATCHED = Symbol('singleshot.batchedWrites');

type BatchedSocket = Socket & { [BATCHED]?: true };

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
    const flush = () => {
      corked = false;
      if (!stream.destroyed) stream.uncork();
    };
    stream.write = function batchedWrite(this: Socket, ...args: Parameters<Socket['write']>): boolean {
      if (!corked && !stream.destroyed) {
        corked = true;
        stream.cork();
        setImmediate(flush);
      }
      return write.apply(this, args);
    } as Socket['write'];
  });
}
