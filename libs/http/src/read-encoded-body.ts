import type { IncomingMessage } from 'node:http';
import * as zlib from 'node:zlib';
import type { Transform } from 'node:stream';
import { readBody, type BodyReadError } from './read-body';

type Done = (error: BodyReadError | undefined, body: Buffer) => void;

const EMPTY = Buffer.alloc(0);
const TOO_LARGE: BodyReadError = { status: 413, type: 'entity.too.large', message: 'request entity too large' };
const ABORTED: BodyReadError = { status: 400, type: 'request.aborted', message: 'request aborted' };

/** zstd only where this node has it (22.15 and later), as body-parser decides. */
const zstd = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;

function decompressor(encoding: string): Transform | undefined {
  if (encoding === 'gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  if (encoding === 'zstd' && zstd) return zstd();
  return undefined;
}

/**
 * Reads a request body into one Buffer, inflating a `Content-Encoding` of
 * gzip, deflate, br (and zstd where node has it) with `limit` applied to the
 * inflated bytes, as `express.raw({ limit })` does. Identity bodies take
 * `readBody`'s way (no stream in between). An unknown encoding is 415 at once;
 * bytes that do not inflate are 400 `stream.error` with zlib's message, given
 * once the rest of the request has been read off.
 */
export function readEncodedBody(req: IncomingMessage, limit: number, done: Done): void {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return readBody(req, limit, done);
  const stream = decompressor(encoding);
  if (!stream) return void process.nextTick(done, { status: 415, type: 'encoding.unsupported', message: `unsupported content encoding "${encoding}"` }, EMPTY);
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (error: BodyReadError | undefined): void => {
    if (finished) return;
    finished = true;
    req.unpipe(stream);
    stream.removeAllListeners('data');
    stream.on('error', () => undefined);
    stream.destroy();
    if (!error) return done(undefined, Buffer.concat(chunks, received));
    // The answer goes out once the client has sent everything (it may still be sending).
    if (error === ABORTED || req.complete || req.destroyed) return done(error, EMPTY);
    req.once('end', () => done(error, EMPTY));
    req.on('error', () => undefined);
    req.resume();
  };
  stream.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) finish(TOO_LARGE);
    else chunks.push(chunk);
  });
  stream.once('end', () => finish(undefined));
  stream.once('error', (err: Error) => finish({ status: 400, type: 'stream.error', message: err.message }));
  req.once('aborted', () => finish(ABORTED));
  req.pipe(stream);
}
