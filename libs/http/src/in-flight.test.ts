import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { InFlightGate, inFlightLimit } from './in-flight';
import { sendJson } from './send-json';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('InFlightGate', () => {
  it('caps two handlers together, answers 503 OVERLOADED with Retry-After, and counts a request out once', async () => {
    const gate = new InFlightGate(1, 2);
    const held: ServerResponse[] = [];
    // Handler A holds its response open; handler B (middleware form) answers at once.
    const a = await serve((_req, res) => {
      if (gate.enter(res)) held.push(res);
    });
    const limited = inFlightLimit(gate);
    const b = await serve((req, res) => limited(req, res, () => sendJson(res, 200, { ok: true })));

    const pending = fetch(a);
    while (gate.inFlight === 0) await new Promise((r) => setTimeout(r, 5));
    const shed = await fetch(b);
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('2');
    expect(shed.headers.get('connection')).toBe('close');
    expect(await shed.json()).toEqual({ error: { code: 'OVERLOADED', message: 'more than 1 requests in flight; retry later' } });
    expect(gate.inFlight).toBe(1);

    held[0]?.end('done');
    expect(await (await pending).text()).toBe('done');
    while (gate.inFlight !== 0) await new Promise((r) => setTimeout(r, 5));
    // Finished and closed: counted out once, not twice.
    const ok = await fetch(b);
    expect(ok.status).toBe(200);
    expect(gate.inFlight).toBe(0);
  });

  it('counts out a request whose client went away before an answer', async () => {
    const gate = new InFlightGate(5);
    let entered = 0;
    const url = await serve((_req, res) => {
      if (gate.enter(res)) entered++;
    });
    const controller = new AbortController();
    const request = fetch(url, { signal: controller.signal }).catch(() => undefined);
    while (entered === 0) await new Promise((r) => setTimeout(r, 5));
    expect(gate.inFlight).toBe(1);
    controller.abort();
    await request;
    while (gate.inFlight !== 0) await new Promise((r) => setTimeout(r, 5));
    expect(gate.inFlight).toBe(0);
  });
});

describe('sendJson', () => {
  it('answers JSON with its length and keeps headers set before', async () => {
    const url = await serve((_req, res) => {
      res.setHeader('retry-after', '1');
      sendJson(res, 202, { messageKey: 'k', status: 'accepted', note: 'ünïcode' });
    });
    const res = await fetch(url);
    const text = await res.text();
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('etag')).toBeNull();
    expect(JSON.parse(text)).toEqual({ messageKey: 'k', status: 'accepted', note: 'ünïcode' });
  });
});
