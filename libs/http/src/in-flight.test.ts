import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { InFlightGate } from './in-flight';
import { sendJson } from './send-json';
import { serveHandler, type ServedHandler } from '@singleshot/test-harness';

const served: ServedHandler[] = [];
afterEach(async () => {
  await Promise.all(served.splice(0).map((s) => s.close()));
});

async function serve(handler: Parameters<typeof serveHandler>[0]): Promise<string> {
  const s = await serveHandler(handler);
  served.push(s);
  return s.url;
}

describe('InFlightGate', () => {
  it('caps two handlers together, answers 503 OVERLOADED with Retry-After, and counts a request out once', async () => {
    const gate = new InFlightGate(1, 2);
    const held: ServerResponse[] = [];
    // Handler A holds its response open; handler B answers at once.
    const a = await serve((_req, res) => {
      if (gate.enter(res)) held.push(res);
    });
    const b = await serve((_req, res) => {
      if (gate.enter(res)) sendJson(res, 200, { ok: true });
    });

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
