import { spawnApps, startHttpSink, startTestRedis, testConfig, writeConfigFile, type AppProcess, type HttpSink, type TestRedis } from '@singleshot/test-harness';

/** A fleet that delivers webhooks to an HTTP sink, on its own Redis. */
export interface SinkFleet {
  readonly redis: TestRedis;
  /** The `webhook` provider `primary` posts here. */
  readonly sink: HttpSink;
  readonly apps: AppProcess;
  /** The config the apps run with, for a runtime in the test process. */
  readonly config: Record<string, unknown>;
  /** Stops the apps, the sink and Redis, and removes the config file. */
  stop(): Promise<void>;
}

/**
 * Starts Redis and an HTTP sink, then `start --only <only>` on a config of
 * `settings` (over `testConfig`'s defaults) whose `webhook` provider `primary`
 * posts to the sink. What started is stopped again when a later step throws.
 */
export async function startSinkFleet(only: string, settings: Record<string, unknown>): Promise<SinkFleet> {
  const started: (() => unknown)[] = [];
  const stop = async () => {
    for (const step of started.splice(0).reverse()) await step();
  };
  try {
    const redis = await startTestRedis();
    started.push(() => redis.destroy());
    const sink = await startHttpSink();
    started.push(() => sink.close());
    const config = testConfig({
      redisUrl: redis.url,
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
      ...settings,
    });
    const written = writeConfigFile(config);
    started.push(() => written.cleanup());
    const apps = spawnApps(only, written.file);
    started.push(() => apps.stop());
    return { redis, sink, apps, config, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
