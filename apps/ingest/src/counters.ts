import type { Counter, Histogram } from 'prom-client';
import type { Metrics } from '@singleshot/observability';

/** Label children by two label values, each looked up in prom-client once. */
class Children<C> {
  private readonly byFirst = new Map<string, Map<string | number, C>>();

  constructor(private readonly make: (first: string, second: string) => C) {}

  get(first: string, second: string | number): C {
    let inner = this.byFirst.get(first);
    if (!inner) this.byFirst.set(first, (inner = new Map()));
    let child = inner.get(second);
    if (!child) inner.set(second, (child = this.make(first, String(second))));
    return child;
  }
}

/**
 * Ingest's per-request metrics through cached `labels()` children, so a
 * request costs no label-object building or validation in prom-client beyond
 * its first use of a label combination. Every label set is bounded: routes,
 * status codes, configured key names, `sourceLabel` sources, fixed results.
 */
export class IngestCounters {
  private readonly durations: Children<Histogram.Internal<string>>;
  private readonly requests: Children<Counter.Internal>;
  private readonly events: Children<Counter.Internal>;
  private readonly duplicate: Counter.Internal;

  constructor(metrics: Pick<Metrics, 'eventsReceived' | 'duplicatesSuppressed' | 'ingestRequestDuration' | 'ingestRequests'>) {
    this.durations = new Children((route, status) => metrics.ingestRequestDuration.labels({ route, status }));
    this.requests = new Children((key, status) => metrics.ingestRequests.labels({ key, status }));
    this.events = new Children((source, result) => metrics.eventsReceived.labels({ source, result }));
    this.duplicate = metrics.duplicatesSuppressed.labels({ stage: 'ingest', reason: 'seen_before' });
  }

  /**
   * One finished HTTP request: its duration by route and status, and, for the
   * intake API (`key` given), the request by producer key and status.
   */
  request(route: string, status: number, seconds: number, key: string | undefined): void {
    this.durations.get(route, status).observe(seconds);
    if (key !== undefined) this.requests.get(key, status).inc();
  }

  /** `singleshot_events_received_total{source,result}`; `source` already bounded (`sourceLabel`). */
  received(source: string, result: string): void {
    this.events.get(source, result).inc();
  }

  /** An arrival answered `duplicate` at ingest. */
  duplicateAtIngest(): void {
    this.duplicate.inc();
  }
}
