import type { RedisClient } from '@singleshot/store';
import type { KeyBuilder } from '@singleshot/store';
import type { OperationState } from './checker';

/**
 * Reads of the chaos run's Redis, straight to Redis (never through the fault
 * proxy), pipelined: a 100,000-event run has a few hundred thousand operations.
 */
const CHUNK = 1000;

/** Status, last change, external id and reason of each operation (null: no op hash). */
export async function readStates(redis: RedisClient, keys: KeyBuilder, operationKeys: string[]): Promise<Map<string, OperationState | null>> {
  const out = new Map<string, OperationState | null>();
  for (let i = 0; i < operationKeys.length; i += CHUNK) {
    const chunk = operationKeys.slice(i, i + CHUNK);
    const pipeline = redis.pipeline();
    for (const key of chunk) pipeline.hmget(keys.op(key), 'status', 'updatedAt', 'externalId', 'reason', 'attempts');
    const results = (await pipeline.exec()) ?? [];
    chunk.forEach((key, j) => {
      const [err, row] = results[j] ?? [new Error('no reply'), null];
      if (err) throw err;
      const [status, updatedAt, externalId, reason, attempts] = row as (string | null)[];
      out.set(
        key,
        status
          ? {
              status,
              ...(updatedAt ? { updatedAt: Number(updatedAt) } : {}),
              ...(externalId ? { externalId } : {}),
              ...(reason ? { reason } : {}),
              ...(attempts ? { attempts: Number(attempts) } : {}),
            }
          : null,
      );
    });
  }
  return out;
}

/** How many of these operations are not yet sent, dead or suppressed. */
export async function countNotTerminal(redis: RedisClient, keys: KeyBuilder, operationKeys: string[]): Promise<number> {
  let open = 0;
  for (let i = 0; i < operationKeys.length; i += CHUNK) {
    const pipeline = redis.pipeline();
    for (const key of operationKeys.slice(i, i + CHUNK)) pipeline.hget(keys.op(key), 'status');
    for (const [err, status] of (await pipeline.exec()) ?? []) {
      if (err || (status !== 'sent' && status !== 'dead' && status !== 'suppressed')) open++;
    }
  }
  return open;
}

/**
 * Pids of the processes holding an operation lock now: lock keys are scanned
 * (only held ones exist, they expire with the lease), and the op hash's
 * `owner` is the holder's worker id `host:pid:random`. The pattern mirrors
 * KeyBuilder.lock with any shard tag; SCAN is bounded so a large keyspace
 * cannot stall the fault timeline.
 */
export async function lockHolderPids(redis: RedisClient, keys: KeyBuilder, maxScans = 30): Promise<number[]> {
  const locks: string[] = [];
  let cursor = '0';
  for (let i = 0; i < maxScans; i++) {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${keys.prefix}:*:lock:*`, 'COUNT', 2000);
    locks.push(...found);
    cursor = next;
    if (cursor === '0' || locks.length >= 20) break;
  }
  if (locks.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const lock of locks) pipeline.hget(lock.replace(':lock:', ':op:'), 'owner');
  const pids = new Set<number>();
  for (const [, owner] of (await pipeline.exec()) ?? []) {
    const match = typeof owner === 'string' ? /:(\d+):[0-9a-f]+$/.exec(owner) : null;
    if (match) pids.add(Number(match[1]));
  }
  return [...pids];
}

/** A terminal journal entry (sent, dead, suppressed) of one operation. */
export interface TerminalEntry {
  type: string;
  fence: string;
  ts: number;
}

export interface JournalScan {
  /** In-doubt entries by error code (why sends ended in doubt). */
  inDoubtByCode: Record<string, number>;
  /** Terminal entries by operation key: exactly one per terminal operation. */
  terminal: Map<string, TerminalEntry[]>;
}

/** Reads every shard's journal once, in pages. */
export async function scanJournal(redis: RedisClient, keys: KeyBuilder): Promise<JournalScan> {
  const scan: JournalScan = { inDoubtByCode: {}, terminal: new Map() };
  for (const stream of keys.allJournals()) {
    let start = '-';
    for (;;) {
      const rows = (await redis.xrange(stream, start, '+', 'COUNT', 5000)) as [string, string[]][];
      for (const [, flat] of rows) {
        const fields = new Map<string, string>();
        for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string);
        const type = fields.get('type');
        if (type === 'in_doubt') {
          const code = fields.get('err') || 'none';
          scan.inDoubtByCode[code] = (scan.inDoubtByCode[code] ?? 0) + 1;
        } else if (type === 'sent' || type === 'dead' || type === 'suppressed') {
          const op = fields.get('op') ?? '';
          const list = scan.terminal.get(op) ?? [];
          list.push({ type, fence: fields.get('fence') ?? '', ts: Number(fields.get('ts') ?? 0) });
          scan.terminal.set(op, list);
        }
      }
      if (rows.length < 5000) break;
      start = `(${rows[rows.length - 1]?.[0]}`;
    }
  }
  return scan;
}
