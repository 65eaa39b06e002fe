import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics, type QueueCounts } from './index';

/** `name{labels} value` lines of one metric, labels in the order prom-client prints them. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('createMetrics', () => {
  it('registers every metric with its type and labels', async () => {
    const metrics = createMetrics(new Registry());
    metrics.eventsReceived.inc({ source: 'shop', result: 'accepted' });
    metrics.duplicatesSuppressed.inc({ stage: 'ingest', reason: 'message_key' });
    metrics.lockConflicts.inc({ queue: 'deliver' });
    metrics.deliveries.inc({ channel: 'email', provider: 'relay', result: 'sent' });
    metrics.deliveryDuration.observe({ channel: 'email', provider: 'relay' }, 0.2);
    metrics.endToEnd.observe({ channel: 'email' }, 1.5);
    metrics.staleCommits.inc({ queue: 'deliver' });
    metrics.inDoubt.inc({ channel: 'webhook', provider: 'primary' });
    metrics.reconciliations.inc({ provider: 'primary', outcome: 'found' });
    metrics.fingerprintFallbacks.inc({ source: 'mail' });
    metrics.ingestRequestDuration.observe({ route: '/v1/events', status: '202' }, 0.004);
    metrics.dead.inc({ channel: 'email', reason: 'permanent' });
    metrics.suppressed.inc({ reason: 'rate_limit' });
    metrics.suppressionsAdded.inc({ reason: 'hard_bounce' });
    const text = await metrics.registry.metrics();

    const expected: Array<[string, string, string]> = [
      ['singleshot_events_received_total', 'counter', 'source="shop",result="accepted"'],
      ['singleshot_duplicates_suppressed_total', 'counter', 'stage="ingest",reason="message_key"'],
      ['singleshot_lock_conflicts_total', 'counter', 'queue="deliver"'],
      ['singleshot_deliveries_total', 'counter', 'channel="email",provider="relay",result="sent"'],
      ['singleshot_stale_commits_total', 'counter', 'queue="deliver"'],
      ['singleshot_in_doubt_total', 'counter', 'channel="webhook",provider="primary"'],
      ['singleshot_reconciliations_total', 'counter', 'provider="primary",outcome="found"'],
      ['singleshot_fingerprint_fallbacks_total', 'counter', 'source="mail"'],
      ['singleshot_dead_total', 'counter', 'channel="email",reason="permanent"'],
      ['singleshot_suppressed_total', 'counter', 'reason="rate_limit"'],
      ['singleshot_suppressions_total', 'counter', 'reason="hard_bounce"'],
    ];
    for (const [name, type, labels] of expected) {
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
      expect(samples(text, name)).toEqual([`${name}{${labels}} 1`]);
    }
    expect(text).toContain('# TYPE singleshot_delivery_duration_seconds histogram\n');
    expect(text).toContain('singleshot_delivery_duration_seconds_bucket{le="0.001",channel="email",provider="relay"} 0');
    expect(text).toContain('singleshot_delivery_duration_seconds_bucket{le="0.25",channel="email",provider="relay"} 1');
    expect(text).toContain('singleshot_delivery_duration_seconds_bucket{le="60",channel="email",provider="relay"} 1');
    expect(text).toContain('# TYPE singleshot_end_to_end_seconds histogram\n');
    expect(text).toContain('singleshot_end_to_end_seconds_count{channel="email"} 1');
    expect(text).toContain('# TYPE singleshot_ingest_request_duration_seconds histogram\n');
    expect(text).toContain('singleshot_ingest_request_duration_seconds_bucket{le="0.005",route="/v1/events",status="202"} 1');
    expect(text).toContain('# TYPE singleshot_queue_jobs gauge\n');
    expect(text).toContain('# TYPE singleshot_dlq_depth gauge\n');
    // Standard process metrics, under their usual names.
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter\n');
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge\n');
  });

  it('returns the same object for the same registry instead of registering twice', () => {
    const registry = new Registry();
    expect(createMetrics(registry)).toBe(createMetrics(registry));
    expect(createMetrics()).not.toBe(createMetrics());
  });

  it('fills the queue and DLQ gauges from their sources, cached between scrapes', async () => {
    const metrics = createMetrics(new Registry());
    let calls = 0;
    let counts: QueueCounts[] = [{ queue: 'decide', counts: { waiting: 3, active: 1, delayed: 0, failed: 2 } }];
    let clock = 1_000_000;
    metrics.setQueueSource(
      async () => {
        calls += 1;
        return counts;
      },
      { now: () => clock },
    );
    let dlqCalls = 0;
    metrics.setDlqSource(async () => {
      dlqCalls += 1;
      return [{ queue: 'deliver', depth: 4 }];
    });

    const first = await metrics.registry.metrics();
    const second = await metrics.registry.metrics();
    expect(calls).toBe(1);
    expect(dlqCalls).toBe(1);
    for (const text of [first, second]) {
      expect(samples(text, 'singleshot_queue_jobs')).toEqual([
        'singleshot_queue_jobs{queue="decide",state="waiting"} 3',
        'singleshot_queue_jobs{queue="decide",state="active"} 1',
        'singleshot_queue_jobs{queue="decide",state="delayed"} 0',
        'singleshot_queue_jobs{queue="decide",state="failed"} 2',
      ]);
      expect(samples(text, 'singleshot_dlq_depth')).toEqual(['singleshot_dlq_depth{queue="deliver"} 4']);
    }

    // Past the 2 s cache the source is asked again, and its new answer replaces the old series.
    counts = [{ queue: 'deliver', counts: { waiting: 7, active: 0, delayed: 5, failed: 0 } }];
    clock += 2_000;
    const third = await metrics.registry.metrics();
    expect(calls).toBe(2);
    expect(samples(third, 'singleshot_queue_jobs')).toEqual([
      'singleshot_queue_jobs{queue="deliver",state="waiting"} 7',
      'singleshot_queue_jobs{queue="deliver",state="active"} 0',
      'singleshot_queue_jobs{queue="deliver",state="delayed"} 5',
      'singleshot_queue_jobs{queue="deliver",state="failed"} 0',
    ]);
  });

  it('shares one in-flight call between concurrent scrapes', async () => {
    const metrics = createMetrics(new Registry());
    let calls = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    metrics.setDlqSource(async () => {
      calls += 1;
      await gate;
      return [{ queue: 'deliver', depth: 1 }];
    });
    const scrapes = [metrics.registry.metrics(), metrics.registry.metrics(), metrics.registry.metrics()];
    release();
    const texts = await Promise.all(scrapes);
    expect(calls).toBe(1);
    for (const text of texts) expect(samples(text, 'singleshot_dlq_depth')).toEqual(['singleshot_dlq_depth{queue="deliver"} 1']);
  });

  it('empties the gauge and reports the error when the source fails, without failing the scrape', async () => {
    const metrics = createMetrics(new Registry());
    let clock = 0;
    let fail = false;
    const errors: unknown[] = [];
    metrics.setDlqSource(
      async () => {
        if (fail) throw new Error('redis down');
        return [{ queue: 'deliver', depth: 9 }];
      },
      { now: () => clock, onError: (err) => errors.push(err) },
    );
    expect(samples(await metrics.registry.metrics(), 'singleshot_dlq_depth')).toEqual(['singleshot_dlq_depth{queue="deliver"} 9']);
    fail = true;
    clock += 5_000;
    const text = await metrics.registry.metrics();
    expect(samples(text, 'singleshot_dlq_depth')).toEqual([]);
    expect(text).toContain('# TYPE singleshot_events_received_total counter');
    expect(errors.map((e) => (e as Error).message)).toEqual(['redis down']);
  });
});
