import { startTestRedisCluster, type TestRedisCluster } from './redis-cluster';
import { startTestRedis, type TestRedis } from './redis-server';

/**
 * The Redis an end-to-end suite runs on: a single Redis by default, the local
 * 3 + 3 cluster when `SINGLESHOT_TEST_REDIS=cluster` (`npm run test:cluster`
 * runs the main scenarios that way). `config` goes into `testConfig`.
 */
export interface TestBackend {
  readonly kind: 'single' | 'cluster';
  /** `testConfig` input: the URL, and the cluster's seed nodes when on a cluster. */
  readonly config: { redisUrl: string; redisCluster?: string[] };
  readonly single?: TestRedis;
  readonly cluster?: TestRedisCluster;
  destroy(): Promise<void>;
}

export function testBackendKind(): 'single' | 'cluster' {
  return process.env.SINGLESHOT_TEST_REDIS === 'cluster' ? 'cluster' : 'single';
}

export async function startTestBackend(kind = testBackendKind()): Promise<TestBackend> {
  if (kind === 'cluster') {
    const cluster = await startTestRedisCluster();
    // The URL is not used once cluster nodes are set; it stays a valid one for the schema.
    return { kind, cluster, config: { redisUrl: `redis://${cluster.seeds[0]}`, redisCluster: cluster.seeds }, destroy: () => cluster.destroy() };
  }
  const single = await startTestRedis();
  return { kind, single, config: { redisUrl: single.url }, destroy: () => single.destroy() };
}
