import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';

/** How often a relay writes its sources' status. */
export const SOURCE_STATUS_INTERVAL_MS = 5_000;
/** A report older than this many intervals means no relay is reporting that source now. */
export const SOURCE_STATUS_STALE_INTERVALS = 3;

/** One source as a relay last saw it. */
export interface SourceStatus {
  /** The `sources:` entry's name. */
  source: string;
  /** Its type (`postgres-outbox`, `rabbitmq`, `nats`, `redis-streams`). */
  type: string;
  /** Whether the reporting relay reached the origin. */
  reachable: boolean;
  /** Messages waiting at the origin; null when it could not be asked. */
  lag: number | null;
  /** When the report was written (ms since the epoch). */
  reportedAt: number;
  /** Which relay process wrote it (`host:pid`). */
  reporter: string;
}

/**
 * The last report of every source (KeyBuilder.sourceStatus). Several relays
 * may consume one source: the latest report wins, which is right for what is
 * stored (the origin's lag and reachability, not per-relay counts).
 */
export class SourceStatusStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Writes the reports of one relay in one command. */
  async report(statuses: readonly SourceStatus[]): Promise<void> {
    if (statuses.length === 0) return;
    const fields: string[] = [];
    for (const s of statuses) fields.push(s.source, JSON.stringify(s));
    await this.redis.hset(this.keys.sourceStatus(), ...fields);
  }

  /** Every stored report by source name; a field that does not parse is left out. */
  async read(): Promise<Map<string, SourceStatus>> {
    const raw = await this.redis.hgetall(this.keys.sourceStatus());
    const out = new Map<string, SourceStatus>();
    for (const [name, value] of Object.entries(raw)) {
      try {
        const parsed = JSON.parse(value) as SourceStatus;
        if (typeof parsed === 'object' && parsed !== null && typeof parsed.reportedAt === 'number') out.set(name, parsed);
      } catch {
        // A report written by another version: skip it rather than fail the listing.
      }
    }
    return out;
  }
}

/** How a configured source reads in a listing: its last report, or why there is none. */
export function sourceState(status: SourceStatus | undefined, now: number): 'reachable' | 'unreachable' | 'stale' | 'no report' {
  if (!status) return 'no report';
  if (now - status.reportedAt > SOURCE_STATUS_STALE_INTERVALS * SOURCE_STATUS_INTERVAL_MS) return 'stale';
  return status.reachable ? 'reachable' : 'unreachable';
}

/** A configured source with its last report (`no report` when no relay wrote one). */
export interface SourceRow {
  source: string;
  type: string;
  state: ReturnType<typeof sourceState>;
  lag: number | null;
  reportedAt: string | null;
  reporter: string | null;
}

/** Every configured source, joined with what the relays last reported of it. */
export function sourceRows(configured: ReadonlyArray<{ name: string; type: string }>, reports: ReadonlyMap<string, SourceStatus>, now: number): SourceRow[] {
  return configured.map((s) => {
    const r = reports.get(s.name);
    return { source: s.name, type: s.type, state: sourceState(r, now), lag: r?.lag ?? null, reportedAt: r ? new Date(r.reportedAt).toISOString() : null, reporter: r?.reporter ?? null };
  });
}
