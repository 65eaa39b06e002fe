import { startProviderSink } from '@singleshot/loadkit';

/**
 * The provider every system posts to (the load kit's provider sink), counting each POST per
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

/** The bench's provider; `delayMs` is its answer time per call (none by default). */
export async function startSink(options: { delayMs?: number } = {}): Promise<Sink> {
  const sink: Sink = { port: 0, received: new Map(), digests: new Map(), posts: 0, close: async () => undefined };
  const provider = await startProviderSink(({ body: parsed }) => {
    const at = performance.now();
    // Anything but a JSON object counts as a post without a pair.
    const body = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Body;
    sink.posts++;
    const digestId = body.data?.digest?.id;
    if (digestId !== undefined) {
      recordDigest(sink.digests, digestId, body, at);
      return;
    }
    const event = body.data?.benchEvent ?? '';
    const key = `${event}|${body.recipient ?? ''}`;
    const hit = sink.received.get(key);
    if (hit) hit.count++;
    else sink.received.set(key, { count: 1, firstAt: at, event });
  }, options);
  sink.port = provider.port;
  sink.close = provider.close;
  return sink;
}
