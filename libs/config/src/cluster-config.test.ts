import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, partitionsOf, waitReplicasOf } from './index';

describe('redis cluster config', () => {
  it('a single Redis keeps one partition and no WAIT', () => {
    const config = parseConfig({});
    expect(partitionsOf(config)).toBe(1);
    expect(waitReplicasOf(config)).toBe(0);
  });

  it('REDIS_CLUSTER_NODES sets the seed nodes; a cluster defaults to one partition per shard and WAIT for 1 replica', () => {
    const config = parseConfig({}, { REDIS_CLUSTER_NODES: '10.0.0.1:6379, 10.0.0.2:6379' });
    expect(config.redis.cluster).toEqual({ nodes: ['10.0.0.1:6379', '10.0.0.2:6379'], waitReplicas: 1, waitTimeoutMs: 1000 });
    expect(partitionsOf(config)).toBe(16);
    expect(waitReplicasOf(config)).toBe(1);
    expect(partitionsOf(parseConfig({ redis: { shards: 64, cluster: { nodes: ['a:1'] } } }))).toBe(64);
  });

  it('names a bad node and a delivery partition that does not exist', () => {
    const err = (() => {
      try {
        parseConfig({ redis: { partitions: 4, cluster: { nodes: ['no-port'] } }, delivery: { partitions: [1, 4] } });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.issues.map((i) => i.path).sort()).toEqual(['delivery.partitions[1]', 'redis.cluster.nodes[0]']);
  });

  it('the managed-cluster example of deploy/ loads (its secret file aside)', () => {
    const raw = parse(readFileSync(resolve(__dirname, '../../../deploy/k8s-cluster/managed-cluster.config.yaml'), 'utf8')) as { redis: Record<string, unknown> };
    const { passwordFile: _secret, ...redis } = raw.redis;
    const config = parseConfig({ redis });
    expect(config.redis.cluster?.nodes).toHaveLength(1);
    expect(partitionsOf(config)).toBe(64);
  });
});
