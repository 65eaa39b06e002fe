import type { IncomingMessage } from 'node:http';

/**
 * Why a body could not be read: over the limit (413), the request broke off
 * or its compressed bytes would not inflate (400), or an encoding nobody
 * inflates (415).
 */
export interface BodyReadError {
  status: 413 | 400 | 415;
  /** As body-parser names them. */
  type: 'entity.too.large' | 'request.aborted' | 'encoding.unsupported' | 'stream.error';
  message: string;
}

const TOO_LARGE: BodyReadError = { status: 413, type: 'entity.too.large', message: 'request entity too large' };
const ABORTED: BodyReadError = { status: 400, type: 'request.aborted', message: 'request aborted' };

/**
 * Reads a request body of identity encoding into one Buffer, as
 * `express.raw({ limit })` does (body-parser 2 / raw-body 3), without its
 * per-request async-hooks wrapping, charset and decompression machinery:
 * - a `Content-Length` above `limit`, or more bytes than `limit` arriving, is
 *   413 `entity.too.large`, reported once the rest of the request has been
 *   read off (so the answer reaches a client still sending);
 * - a request that breaks off is 400 `request.aborted`;
 * - no body framing at all is an empty body.
 * The caller must only hand it requests without a `Content-Encoding` (or
 * `identity`): compressed bodies are body-parser's to inflate.
 */
export function readBody(req: IncomingMessage, limit: number, done: (error: BodyReadError | undefined, body: Buffer) => void): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return discard(req, done);
  let chunks: Buffer[] | undefined;
  let first: Buffer | undefined;
  let received = 0;
  let finished = false;
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > limit) {
      finish();
      req.pause();
      discard(req, done);
      return;
    }
    // Most bodies arrive in one chunk: no array, no copy.
    if (first === undefined) first = chunk;
    else (chunks ??= [first]).push(chunk);
  };
  const onEnd = (): void => {
    if (finish()) done(undefined, chunks ? Buffer.concat(chunks, received) : (first ?? EMPTY));
  };
  const onAborted = (): void => {
    if (finish()) done(ABORTED, EMPTY);
  };
  const finish = (): boolean => {
    if (finished) return false;
    finished = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('aborted', onAborted);
    return true;
  };
  req.on('data', onData);
  req.on('end', onEnd);
  // A broken-off request emits 'aborted' first; its 'error' that follows is
  // not emitted at all without a listener, so none is attached.
  req.on('aborted', onAborted);
}

const EMPTY = Buffer.alloc(0);

/** Reads the rest of the request off, then reports 413 (body-parser answers only once the request is over). */
function discard(req: IncomingMessage, done: (error: BodyReadError | undefined, body: Buffer) => void): void {
  if (req.complete || req.destroyed) return void process.nextTick(done, TOO_LARGE, EMPTY);
  let called = false;
  const once = (): void => {
    if (called) return;
    called = true;
    done(TOO_LARGE, EMPTY);
  };
  req.once('end', once);
  req.once('close', once);
  req.on('error', () => undefined);
  req.resume();
}
