import type { RedisClient } from './connection';
import type { ChainableCommander } from 'ioredis';
import { execAcrossSlots } from './cross-slot';
import type { KeyBuilder } from './keys';
import {
  SUMMARY_FIELDS,
  decodeOperation,
  decodeStoredJob,
  decodeSummary,
  type AttemptRecord,
  type OperationProbe,
  type OperationRecord,
  type OperationSummary,
} from './operation-record';

/**
 * Typed reads of operations. The sweeper, replay and the lists read through
 * these instead of the hash's fields, so the layout stays the store's own.
 * The state hash and the data hash (`KeyBuilder.opData`) of one operation
 * share its slot, so their reads go in one pipeline on a cluster too.
 */
export class OperationReader {
  constructor(
    protected readonly redis: RedisClient,
    protected readonly keys: KeyBuilder,
  ) {}

  async get(operationKey: string): Promise<OperationRecord | null> {
    const [[stateErr, state], [dataErr, lastError]] = (await this.redis
      .pipeline()
      .hgetall(this.keys.op(operationKey))
      .hget(this.keys.opData(operationKey), 'lastError')
      .exec()) as [[Error | null, Record<string, string>], [Error | null, string | null]];
    if (stateErr) throw stateErr;
    if (dataErr) throw dataErr;
    return decodeOperation(operationKey, state, lastError);
  }

  async history(operationKey: string): Promise<AttemptRecord[]> {
    const items = await this.redis.lrange(this.keys.history(operationKey), 0, -1);
    return items.map((item) => JSON.parse(item) as AttemptRecord);
  }

  /** The deliver job kept at the first claim (parsed JSON, unvalidated); undefined when none. */
  async storedJob(operationKey: string): Promise<unknown> {
    return decodeStoredJob(await this.redis.hget(this.keys.opData(operationKey), 'job'));
  }

  /** Status, stored job and lock TTL of several operations, in one round trip. */
  async probe(operationKeys: readonly string[]): Promise<OperationProbe[]> {
    if (operationKeys.length === 0) return [];
    const replies = await execAcrossSlots(
      this.redis,
      operationKeys.flatMap((key) => [
        (p: ChainableCommander) => p.hget(this.keys.op(key), 'status'),
        (p: ChainableCommander) => p.hget(this.keys.opData(key), 'job'),
        (p: ChainableCommander) => p.pttl(this.keys.lock(key)),
      ]),
    );
    return operationKeys.map((operationKey, i) => {
      const [hashErr, status] = replies[3 * i] ?? [null, null];
      const [dataErr, job] = replies[3 * i + 1] ?? [null, null];
      const [ttlErr, ttl] = replies[3 * i + 2] ?? [null, -2];
      if (hashErr) throw hashErr;
      if (dataErr) throw dataErr;
      if (ttlErr) throw ttlErr;
      return {
        operationKey,
        ...(status ? { status: status as OperationProbe['status'] } : {}),
        ...(job ? { job: decodeStoredJob(job as string) } : {}),
        lockTtlMs: Number(ttl ?? -2),
      };
    });
  }

  /** Status, recipient, channel, reason and last error of several operations, in one round trip. */
  async summaries(operationKeys: readonly string[]): Promise<OperationSummary[]> {
    if (operationKeys.length === 0) return [];
    const replies = await execAcrossSlots(
      this.redis,
      operationKeys.flatMap((key) => [
        (p: ChainableCommander) => p.hmget(this.keys.op(key), ...SUMMARY_FIELDS),
        (p: ChainableCommander) => p.hget(this.keys.opData(key), 'lastError'),
      ]),
    );
    return operationKeys.map((operationKey, i) => {
      const [err, fields] = replies[2 * i] ?? [null, null];
      const [dataErr, lastError] = replies[2 * i + 1] ?? [null, null];
      if (err) throw err;
      if (dataErr) throw dataErr;
      return decodeSummary(operationKey, (fields as (string | null)[] | null) ?? [], lastError as string | null);
    });
  }
}
