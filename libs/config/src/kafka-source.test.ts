import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, redactConfig } from './index';

const kafka = { type: 'kafka', name: 'k', source: 'shop', brokers: ['127.0.0.1:9092'], topic: 'orders' };

function issuesOf(input: Record<string, unknown>): string[] {
  try {
    parseConfig({ sources: [input] });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => i.path).sort();
    throw err;
  }
  return [];
}

describe('kafka source config', () => {
  it('fills in the group, the client id and the group timings', () => {
    const [source] = parseConfig({ sources: [kafka] }).sources;
    expect(source).toMatchObject({ group: 'singleshot', clientId: 'singleshot-relay', ssl: false, sessionTimeoutMs: 30_000, heartbeatIntervalMs: 3_000, concurrency: 64, id: { from: 'json', path: '$.id' } });
  });

  it('takes the id from the key, a header or the body, and nothing else', () => {
    expect(issuesOf({ ...kafka, id: { from: 'key' } })).toEqual([]);
    expect(issuesOf({ ...kafka, id: { from: 'header', name: 'event-id' } })).toEqual([]);
    expect(issuesOf({ ...kafka, id: { from: 'field', name: 'id' } })).toEqual(['sources[0].id.from']);
  });

  it('refuses a broker without a port, a heartbeat not below the session timeout, and SASL without a password', () => {
    expect(issuesOf({ ...kafka, brokers: ['kafka-1'] })).toEqual(['sources[0].brokers[0]']);
    expect(issuesOf({ ...kafka, sessionTimeoutMs: 6_000, heartbeatIntervalMs: 6_000 })).toEqual(['sources[0].heartbeatIntervalMs']);
    expect(issuesOf({ ...kafka, sasl: { mechanism: 'scram-sha-512', username: 'relay' } })).toEqual(['sources[0].sasl.password']);
  });

  it('reads the SASL password from passwordFile and never prints it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ss-kafka-secret-'));
    try {
      writeFileSync(join(dir, 'kafka-pass'), 'k4fka-s3cret\n');
      const config = parseConfig({ sources: [{ ...kafka, ssl: true, sasl: { mechanism: 'plain', username: 'relay', passwordFile: 'kafka-pass' } }] }, {}, { baseDir: dir });
      const [source] = config.sources;
      expect(source?.type === 'kafka' && source.sasl?.password).toBe('k4fka-s3cret');
      expect(JSON.stringify(redactConfig(config))).not.toContain('k4fka-s3cret');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
