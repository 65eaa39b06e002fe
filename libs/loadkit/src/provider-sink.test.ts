import { afterEach, describe, expect, it } from 'vitest';
import { startProviderSink, type ProviderSink, type SinkPost } from './provider-sink';

let sink: ProviderSink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

describe('startProviderSink', () => {
  it('answers a repeated Idempotency-Key with the same id, looks it up, and hands every POST to record', async () => {
    const posts: SinkPost[] = [];
    sink = await startProviderSink((post) => posts.push(post));
    const base = `http://127.0.0.1:${sink.port}`;
    const send = (body: string, key?: string) =>
      fetch(`${base}/send`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) } }).then((r) => r.json() as Promise<{ id: string }>);

    const first = await send('{"data":{"n":1}}', 'op/1');
    const again = await send('{"data":{"n":2}}', 'op/1');
    const other = await send('not json', 'op/2');
    const unkeyed = await send('{}');
    expect(again.id).toBe(first.id);
    expect(new Set([first.id, other.id, unkeyed.id]).size).toBe(3);
    expect(posts.map((p) => p.body)).toEqual([{ data: { n: 1 } }, { data: { n: 2 } }, undefined, {}]);
    expect(posts[0]?.headers['idempotency-key']).toBe('op/1');

    const found = await fetch(`${base}/messages/${encodeURIComponent('op/1')}`);
    expect(found.status).toBe(200);
    expect(await found.json()).toEqual({ id: first.id });
    expect((await fetch(`${base}/messages/never-sent`)).status).toBe(404);
    expect((await fetch(`${base}/send`, { method: 'PUT', body: '{}' })).status).toBe(404);
  });
});
