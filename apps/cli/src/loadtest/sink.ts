import { startProviderSink } from '@singleshot/loadkit';

/**
 * The loadtest's notification endpoint: the load kit's idempotent provider
 * sink, counting every POST per Idempotency-Key, so a second send shows up as
 * a duplicate.
 */
export interface LoadSink {
  port: number;
  /** Idempotency-Key → number of POSTs and first receipt time. */
  received: Map<string, { count: number; firstAt: number; eventId: string }>;
  totalPosts: number;
  close(): Promise<void>;
}

export async function startLoadSink(port: number, host = '127.0.0.1'): Promise<LoadSink> {
  const sink: LoadSink = { port, received: new Map(), totalPosts: 0, close: async () => undefined };
  const provider = await startProviderSink(
    ({ body, headers }) => {
      const key = String(headers['idempotency-key'] ?? '');
      // A post without a usable body still counts, under an empty event id.
      const eventId = (body as { data?: { loadtestId?: string } } | null | undefined)?.data?.loadtestId ?? '';
      sink.totalPosts++;
      const hit = sink.received.get(key);
      if (hit) hit.count++;
      else sink.received.set(key, { count: 1, firstAt: Date.now(), eventId });
    },
    { port, host },
  );
  sink.port = provider.port;
  sink.close = provider.close;
  return sink;
}
