import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody, type BodyReadError } from './read-body';

const LIMIT = 64;
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

let requests = 0;

/** A server answering what readBody reported: `200 <body>` or `<status> <type>`; `seen` gets every outcome. */
async function start(seen: Array<{ error?: BodyReadError; body: Buffer }> = []): Promise<number> {
  server = createServer((req, res) => {
    requests++;
    readBody(req, LIMIT, (error, body) => {
      seen.push({ ...(error ? { error } : {}), body });
      const answer = error ? Buffer.from(error.type) : body;
      res.writeHead(error ? error.status : 200, { connection: 'close', 'content-length': answer.length });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Writes raw request bytes (in pieces, one write each) and reads the whole answer. */
function raw(port: number, pieces: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      for (const piece of pieces) socket.write(piece);
    });
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString()));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

describe('readBody', () => {
  it('returns the body of one chunk and of many (chunked encoding) byte for byte', async () => {
    const port = await start();
    const one = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'héllo' });
    expect(one.status).toBe(200);
    expect(await one.text()).toBe('héllo');
    const chunked = await raw(port, ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', '3\r\nabc\r\n', '4\r\ndefg\r\n', '0\r\n\r\n']);
    expect(chunked).toMatch(/^HTTP\/1\.1 200 /);
    expect(chunked.endsWith('abcdefg')).toBe(true);
  });

  it('gives an empty body for a request without body framing and for Content-Length 0', async () => {
    const seen: Array<{ error?: BodyReadError; body: Buffer }> = [];
    const port = await start(seen);
    expect(await raw(port, ['POST / HTTP/1.1\r\nHost: x\r\n\r\n'])).toMatch(/^HTTP\/1\.1 200 /);
    expect(await raw(port, ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n'])).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen.map((s) => [s.error, s.body.length])).toEqual([
      [undefined, 0],
      [undefined, 0],
    ]);
  });

  it('takes exactly the limit, and answers 413 past it only once the rest of the request is read off', async () => {
    const seen: Array<{ error?: BodyReadError; body: Buffer }> = [];
    const port = await start(seen);
    const exact = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x'.repeat(LIMIT) });
    expect(exact.status).toBe(200);
    expect((await exact.text()).length).toBe(LIMIT);
    // Declared too large: refused without buffering, answered only after the whole body arrived.
    const before = requests;
    const outcomes = seen.length;
    let declared = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${LIMIT + 1}\r\n\r\n`));
    socket.on('data', (c: Buffer) => (declared += c.toString()));
    const ended = new Promise((resolve) => socket.on('end', resolve));
    while (requests === before) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setImmediate(r));
    const early = seen.length - outcomes;
    socket.write('y'.repeat(LIMIT + 1));
    await ended;
    expect(early).toBe(0);
    expect(declared).toMatch(/^HTTP\/1\.1 413 /);
    expect(declared.endsWith('entity.too.large')).toBe(true);
    // Streamed past the limit (no length declared).
    const streamed = await raw(port, ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', `40\r\n${'z'.repeat(64)}\r\n`, '1\r\nz\r\n', '0\r\n\r\n']);
    expect(streamed).toMatch(/^HTTP\/1\.1 413 /);
    expect(seen.filter((s) => s.error).map((s) => [s.error?.status, s.error?.type, s.body.length])).toEqual([
      [413, 'entity.too.large', 0],
      [413, 'entity.too.large', 0],
    ]);
  });

  it('reports 400 request.aborted once for a request that breaks off mid-body', async () => {
    const seen: Array<{ error?: BodyReadError; body: Buffer }> = [];
    const port = await start(seen);
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nonly part', () => setImmediate(() => socket.destroy()));
      });
      socket.on('close', () => resolve());
    });
    await new Promise<void>((resolve) => {
      const wait = () => (seen.length > 0 ? resolve() : setTimeout(wait, 10));
      wait();
    });
    expect(seen).toEqual([{ error: { status: 400, type: 'request.aborted', message: 'request aborted' }, body: Buffer.alloc(0) }]);
  });
});
