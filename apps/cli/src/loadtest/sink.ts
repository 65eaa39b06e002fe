import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loadtest's notification endpoint: an idempotent HTTP provider (same id for
 * a repeated Idempotency-Key, as docs/contract.md expects of a provider) that counts
 * every POST per key, so a second send shows up as a duplicate.
 */
export interface LoadSink {
  port: number;
  /** Idempotency-Key → number of POSTs and first receipt time. */
  received: Map<string, { count: number; firstAt: number; eventId: string }>;
  totalPosts: number;
  close(): Promise<void>;
}

export async function startLoadSink(port: number, host = '127.0.0.1'): Promise<LoadSink> {
  const received: LoadSink['received'] = new Map();
  const sink = { port, received, totalPosts: 0, close: async () => undefined } as LoadSink;
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/messages/')) {
      const key = decodeURIComponent(req.url.slice('/messages/'.length));
      const hit = received.get(key);
      res.writeHead(hit ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(hit ? { id: `sink-${key.slice(0, 16)}` } : { error: 'not found' }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = String(req.headers['idempotency-key'] ?? '');
      let eventId = '';
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { loadtestId?: string } };
        eventId = body.data?.loadtestId ?? '';
      } catch {
        // counted below as a post without a usable body
      }
      sink.totalPosts++;
      const hit = received.get(key);
      if (hit) hit.count++;
      else received.set(key, { count: 1, firstAt: Date.now(), eventId });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `sink-${key.slice(0, 16)}` }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  sink.port = (server.address() as AddressInfo).port;
  sink.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return sink;
}
