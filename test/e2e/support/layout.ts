import { Redis } from 'ioredis';
import { KeyBuilder, LAYOUT_VERSION } from '@singleshot/store';
import { nextLayoutCopy, spawnApps, startHttpSink, startTestRedis, testConfig, writeConfigFile, type AppProcess, type HttpSink, type NextLayoutCopy, type TestRedis } from '@singleshot/test-harness';

/**
 * What the layout-change tests share: a Redis, a webhook sink with lookups, a
 * config of two routes (`order.created` sent at once, `order.reminder` after
 * `reminderDelay`), this build and a copy of it at the next layout
 * (nextLayoutCopy), and every process either started, to stop at the end.
 */
export interface LayoutLab {
  redis: TestRedis;
  /** A plain client for reading operations as they are in Redis. */
  admin: Redis;
  sink: HttpSink;
  configFile: string;
  keys: KeyBuilder;
  /** The layout the copy knows. */
  next: number;
  /** Starts `start --only <only>` of this build, or of the copy at the next layout. */
  spawn(only: string, build?: 'this' | 'next'): AppProcess;
  close(): Promise<void>;
}

export async function layoutLab({ reminderDelay, timeoutMs }: { reminderDelay: string; timeoutMs: number }): Promise<LayoutLab> {
  const copy: NextLayoutCopy = nextLayoutCopy(LAYOUT_VERSION);
  const redis = await startTestRedis();
  const admin = new Redis(redis.url, { maxRetriesPerRequest: null });
  const sink = await startHttpSink();
  const written = writeConfigFile(
    testConfig({
      redisUrl: redis.url,
      routes: [
        { name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event' },
        { name: 'reminders', match: { source: 'shop', type: 'order.reminder' }, action: 'notify', channel: 'webhook', recipients: 'event', delay: reminderDelay },
      ],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs }] },
    }),
  );
  const procs: AppProcess[] = [];
  return {
    redis,
    admin,
    sink,
    configFile: written.file,
    keys: new KeyBuilder('ss', 16),
    next: copy.layout,
    spawn: (only, build = 'this') => {
      const proc = spawnApps(only, written.file, {}, build === 'next' ? { cliMain: copy.cliMain, cwd: copy.root } : undefined);
      procs.push(proc);
      return proc;
    },
    close: async () => {
      await Promise.all(procs.map((p) => p.stop()));
      admin.disconnect();
      await sink.close();
      await redis.destroy();
      written.cleanup();
      copy.cleanup();
    },
  };
}

/** `/readyz` of a process: its status and the checks it names. */
export async function readyz(proc: AppProcess): Promise<{ status: number; body: { checks?: Record<string, string> } }> {
  const res = await fetch(`http://127.0.0.1:${await proc.metricsPort()}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks?: Record<string, string> } };
}
