import type { ChainableCommander } from 'ioredis';
import { isCluster, mastersOf, type KeyBuilder, type RedisClient } from '@singleshot/store';
import type { OperationState } from './checker';

/**
 * Reads of the chaos run's Redis, straight to Redis (never through the fault
 * proxy), pipelined: a 100,000-event run has a few hundred thousand operations.
 */
const CHUNK = 1000;

/** The `{tag}` of a key, which decides its cluster slot (the whole key when it has none). */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/**
 * One command per Redis key, pipelined, replies in the keys' order. A cluster
 * client refuses a pipeline whose keys live on several nodes, so there the
 * keys are grouped by hash tag (one tag, one slot) and every group is its own
 * pipeline, all sent at once.
 */
async function perKey(redis: RedisClient, redisKeys: readonly string[], command: (p: ChainableCommander, key: string) => unknown): Promise<[Error | null, unknown][]> {
  const groups = new Map<string, number[]>();
  for (let i = 0; i < redisKeys.length; i++) {
    const group = isCluster(redis) ? hashTag(redisKeys[i] as string) : '';
    const list = groups.get(group) ?? [];
    list.push(i);
    groups.set(group, list);
  }
  const out: [Error | null, unknown][] = new Array(redisKeys.length);
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      for (let i = 0; i < indexes.length; i += CHUNK) {
        const chunk = indexes.slice(i, i + CHUNK);
        const pipeline = redis.pipeline();
        for (const index of chunk) command(pipeline, redisKeys[index] as string);
        const results = (await pipeline.exec()) ?? [];
        chunk.forEach((index, j) => (out[index] = (results[j] as [Error | null, unknown] | undefined) ?? [new Error('no reply'), null]));
      }
    }),
  );
  return out;
}

/** Status, last change, external id and reason of each operation (null: no op hash). */
export async function readStates(redis: RedisClient, keys: KeyBuilder, operationKeys: string[]): Promise<Map<string, OperationState | null>> {
  const out = new Map<string, OperationState | null>();
  const results = await perKey(
    redis,
    operationKeys.map((key) => keys.op(key)),
    (p, key) => p.hmget(key, 'status', 'updatedAt', 'externalId', 'reason', 'attempts'),
  );
  operationKeys.forEach((key, j) => {
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
  return out;
}

/** How many of these operations are not yet sent, dead or suppressed. */
export async function countNotTerminal(redis: RedisClient, keys: KeyBuilder, operationKeys: string[]): Promise<number> {
  let open = 0;
  const results = await perKey(
    redis,
    operationKeys.map((key) => keys.op(key)),
    (p, key) => p.hget(key, 'status'),
  );
  for (const [err, status] of results) {
    if (err || (status !== 'sent' && status !== 'dead' && status !== 'suppressed')) open++;
  }
  return open;
}

/**
 * Pids of the processes holding an operation lock now: lock keys are scanned
 * (only held ones exist, they expire with the lease), and the op hash's
 * `owner` is the holder's worker id `host:pid:random`. The pattern mirrors
 * KeyBuilder.lock with any shard tag; SCAN is bounded so a large keyspace
 * cannot stall the fault timeline. On a cluster every master is scanned (a
 * SCAN reaches one node only).
 */
export async function lockHolderPids(redis: RedisClient, keys: KeyBuilder, maxScans = 30): Promise<number[]> {
  const locks: string[] = [];
  for (const node of mastersOf(redis)) {
    let cursor = '0';
    for (let i = 0; i < maxScans; i++) {
      const [next, found] = await node.scan(cursor, 'MATCH', `${keys.prefix}:*:lock:*`, 'COUNT', 2000);
      locks.push(...found);
      cursor = next;
      if (cursor === '0' || locks.length >= 20) break;
    }
    if (locks.length >= 20) break;
  }
  if (locks.length === 0) return [];
  const pids = new Set<number>();
  for (const [, owner] of await perKey(redis, locks.map((lock) => lock.replace(':lock:', ':op:')), (p, key) => p.hget(key, 'owner'))) {
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
