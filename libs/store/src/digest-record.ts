import type { RedisClient } from './connection';
import type { DigestCloseReason } from './digest-store';
import type { KeyBuilder } from './keys';

/**
 * A closed digest as operators look it up (`ops show`, `messages show`):
 * what it gathered, its members in order and the operation that sends it.
 * Written once its close fixed the items, before the flush is enqueued, so
 * every flush operation that exists has one.
 */
export interface DigestRecord {
  /** The digest id: the flush operation's message key. */
  id: string;
  group: string;
  seq: number;
  route: string;
  recipient: string;
  key: string;
  reason: DigestCloseReason;
  openedAt: number;
  closeAt: number;
  closedAt: number;
  /** The members' message keys, in join order (those a cancel took out left out). */
  members: string[];
  /** `flush`: a flush operation carries it; `empty`: cancels took every member out, nothing is sent. */
  state: 'flush' | 'empty';
  /** The flush operation ('' when empty). */
  operationKey: string;
}

/**
 * Digest records, one JSON string per digest in the digest id's slot, kept
 * for the retention. A rewrite after a crash writes the same record (the
 * close returns the same items every time), so a plain SET is idempotent.
 */
export class DigestRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { retentionMs: number },
  ) {}

  async write(record: DigestRecord): Promise<void> {
    await this.redis.set(this.keys.digestRecord(record.id), JSON.stringify(record), 'PX', this.options.retentionMs);
  }

  async read(id: string): Promise<DigestRecord | null> {
    const raw = await this.redis.get(this.keys.digestRecord(id));
    return raw ? (JSON.parse(raw) as DigestRecord) : null;
  }
}
