import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The provider every system posts to: an HTTP endpoint answering `{ "id" }`
 * (and the lookup singleshot's reconciliation uses), counting each POST per
 * (event, recipient) from the body's `data.benchEvent` and `recipient`. A second
 * POST for the same pair is a duplicate; a pair never seen is lost. A digest's
 * flush (a body whose `data` has `digest.id` and `items`) is counted per digest
 * id instead, with its members' events.
 */
export interface Sink {
  port: number;
  /** `event|recipient` → POSTs and the first one's time (performance.now()). */
  received: Map<string, { count: number; firstAt: number; event: string }>;
  /** Digest id → POSTs, the first one's time and (from the first POST) its recipient, reason and items' events in order. */
  digests: Map<string, SinkDigest>;
  posts: number;
  close(): Promise<void>;
}

/** One digest as the sink accepted it. */
export interface SinkDigest {
  count: number;
  firstAt: number;
  recipient: string;
  /** Why it closed (`window`, `max_items`, `bytes`). */
  reason: string;
  /** Each item's `data.benchEvent`, else its event `id`, else its `messageKey`. */
  events: string[];
}

interface Item {
  messageKey?: string;
  id?: string;
  data?: { benchEvent?: string };
}

interface Body {
  recipient?: string;
  data?: { benchEvent?: string; digest?: { id?: string; reason?: string }; items?: Item[] };
}

function recordDigest(digests: Sink['digests'], id: string, body: Body, at: number): void {
  const hit = digests.get(id);
  if (hit) {
    hit.count++;
    return;
  }
  const events = (body.data?.items ?? []).map((i) => i.data?.benchEvent ?? i.id ?? i.messageKey ?? '');
  digests.set(id, { count: 1, firstAt: at, recipient: body.recipient ?? '', reason: body.data?.digest?.reason ?? '', events });
}

export async function startSink(): Promise<Sink> {
  const received: Sink['received'] = new Map();
  const sink: Sink = { port: 0, received, digests: new Map(), posts: 0, close: async () => undefined };
  const byKey = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET') {
      // Lookup by idempotency key (singleshot reconciles an in-doubt send this way).
      const id = byKey.get(decodeURIComponent((req.url ?? '').replace(/^\/messages\//, '')));
      res.writeHead(id ? 200 : 404, { 'content-type': 'application/json' }).end(id ? `{"id":"${id}"}` : '{"error":"not found"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      let body: Body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
      } catch {
        // counted as a post without a pair
      }
      sink.posts++;
      const digestId = body.data?.digest?.id;
      if (digestId !== undefined) {
        recordDigest(sink.digests, digestId, body, at);
      } else {
        const event = body.data?.benchEvent ?? '';
        const key = `${event}|${body.recipient ?? ''}`;
        const hit = received.get(key);
        if (hit) hit.count++;
        else received.set(key, { count: 1, firstAt: at, event });
      }
      const idem = req.headers['idempotency-key'];
      const id = (typeof idem === 'string' && byKey.get(idem)) || `sink-${sink.posts}`;
      if (typeof idem === 'string') byKey.set(idem, id);
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"id":"${id}"}`);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  sink.port = (server.address() as AddressInfo).port;
  sink.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return sink;
}
