import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST as the sink took it: the parsed JSON body (`undefined` when it was not JSON) and its headers. */
export interface SinkPost {
  body: unknown;
  headers: IncomingHttpHeaders;
}

/** A running provider sink. */
export interface ProviderSink {
  port: number;
  close(): Promise<void>;
}

/**
 * The provider a load run posts its notifications to: an idempotent HTTP
 * provider as docs/contract.md expects (the same `{ "id" }` for a repeated
 * Idempotency-Key) with the lookup singleshot reconciles an in-doubt send by
 * (`GET /messages/<key>`: 200 with the id once a POST with that key arrived,
 * else 404). What a POST counts for is the caller's: `record` sees each one,
 * JSON or not, once its body has arrived.
 */
export async function startProviderSink(record: (post: SinkPost) => void, options: { port?: number; host?: string; delayMs?: number } = {}): Promise<ProviderSink> {
  const byKey = new Map<string, string>();
  let posts = 0;
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET') {
      const id = req.url?.startsWith('/messages/') ? byKey.get(decodeURIComponent(req.url.slice('/messages/'.length))) : undefined;
      res.writeHead(id ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(id ? { id } : { error: 'not found' }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // recorded as a post without a usable body
      }
      posts++;
      record({ body, headers: req.headers });
      const idem = req.headers['idempotency-key'];
      const id = (typeof idem === 'string' && byKey.get(idem)) || `sink-${posts}`;
      if (typeof idem === 'string') byKey.set(idem, id);
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
      // A provider's own time per call (an API's round trip), recorded on arrival.
      if (options.delayMs) setTimeout(answer, options.delayMs);
      else answer();
    });
  });
  // The fleet keeps its connections to the provider open between sends.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
