import type { AnyErrorCode } from '@singleshot/core';
import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

/** A render operation's status: `stored` and `dead` are final (until a replay). */
export type DocumentStatus = 'pending' | 'rendering' | 'failed' | 'stored' | 'dead';

/** Where a stored document is and what it is. */
export interface StoredDocument {
  checksum: string;
  storeKey: string;
  size: number;
  fileName: string;
  contentType: string;
}

export type DocumentClaim =
  | { kind: 'claimed'; fence: string; attempts: number; previousStatus: DocumentStatus }
  | ({ kind: 'stored' } & StoredDocument)
  | { kind: 'dead'; attempts: number; error: { code: string; message: string } }
  | { kind: 'conflict'; retryInMs: number };

export interface DocumentRecord {
  documentKey: string;
  status: DocumentStatus;
  attempts: number;
  fence: string;
  messageKey?: string;
  stored?: StoredDocument;
  lastErrorCode?: string;
  lastError?: string;
  nextAttemptAt?: number;
  owner?: string;
  replays: number;
  journalIds: string[];
  /** The render job as first claimed (what a replay runs again). */
  job?: string;
}

export type DocumentCommit =
  | ({ outcome: 'stored' } & StoredDocument)
  | { outcome: 'failed'; error: { code: AnyErrorCode; message: string }; nextAttemptAt: number }
  | { outcome: 'dead'; error: { code: AnyErrorCode; message: string } };

/**
 * Render operations: a document's own lock and fence, attempts, and its place
 * in the journal (its checksum). Every check-and-set is one Lua script.
 */
export class DocumentStateStore {
  private readonly now: () => number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { retentionMs: number; now?: () => number },
  ) {
    this.now = options.now ?? Date.now;
  }

  async claim(input: { documentKey: string; messageKey: string; owner: string; leaseMs: number; job: object }): Promise<DocumentClaim> {
    const now = this.now();
    const k = this.keys;
    const raw = (await runScript(
      this.redis,
      'doc-claim',
      [k.doc(input.documentKey), k.docLock(input.documentKey), k.journalOf(input.documentKey)],
      {
        leaseMs: decimal(input.leaseMs),
        now: decimal(now),
        leaseUntil: decimal(now + input.leaseMs),
        owner: input.owner,
        retentionMs: decimal(this.options.retentionMs),
        messageKey: input.messageKey,
      },
      [JSON.stringify(input.job)],
    )) as (string | number)[];
    const [kind, a, b, c, d, e] = raw.map((v) => String(v));
    switch (kind) {
      case 'claimed':
        return { kind, fence: a as string, attempts: Number(b), previousStatus: c as DocumentStatus };
      case 'stored':
        return { kind, checksum: a as string, storeKey: b as string, size: Number(c), fileName: d as string, contentType: e as string };
      case 'dead':
        return { kind, attempts: Number(a), error: { code: b || 'DOCUMENT_FAILED', message: c ?? '' } };
      case 'conflict':
        return { kind, retryInMs: Math.max(1, Number(a)) };
      default:
        throw new Error(`doc-claim script returned unknown result ${kind}`);
    }
  }

  async commit(input: { documentKey: string; fence: string; name: string; messageKey: string } & DocumentCommit): Promise<{ kind: 'ok'; journalId: string } | { kind: 'stale' }> {
    const now = this.now();
    const k = this.keys;
    const stored = input.outcome === 'stored' ? input : undefined;
    const error = input.outcome === 'stored' ? undefined : input.error;
    const [kind, value] = (await runScript(
      this.redis,
      'doc-commit',
      [k.doc(input.documentKey), k.docLock(input.documentKey), k.journalOf(input.documentKey)],
      {
        fence: input.fence,
        outcome: input.outcome,
        now: decimal(now),
        retentionMs: decimal(this.options.retentionMs),
        journalMinId: decimal(now - this.options.retentionMs),
        documentKey: input.documentKey,
        name: input.name,
        messageKey: input.messageKey,
        ...(stored
          ? { checksum: stored.checksum, size: decimal(stored.size), storeKey: stored.storeKey, fileName: stored.fileName, contentType: stored.contentType }
          : {}),
        ...(error ? { errorCode: error.code, errorMessage: error.message.slice(0, 2000) } : {}),
        ...(input.outcome === 'failed' ? { nextAttemptAt: decimal(input.nextAttemptAt) } : {}),
      },
    )) as [string, string];
    return kind === 'ok' ? { kind, journalId: value } : { kind: 'stale' };
  }

  /** Extends the render lease while the fence holds. */
  async extend(documentKey: string, fence: string, leaseMs: number): Promise<boolean> {
    const result = await runScript(this.redis, 'extend-lock', [this.keys.docLock(documentKey), this.keys.doc(documentKey)], {
      fence,
      leaseMs: decimal(leaseMs),
      leaseUntil: decimal(this.now() + leaseMs),
    });
    return Number(result) === 1;
  }

  /** A failed-for-good document back to pending, once; returns the render job to re-add (and the replay's number), or null. */
  async replay(documentKey: string, by: string): Promise<{ job: string; round: number } | null> {
    const now = this.now();
    const [kind, job, round] = (await runScript(
      this.redis,
      'doc-replay',
      [this.keys.doc(documentKey), this.keys.journalOf(documentKey)],
      { now: decimal(now), by, journalMinId: decimal(now - this.options.retentionMs), documentKey },
    )) as [string, string?, number?];
    return kind === 'replayed' && job ? { job, round: Number(round) } : null;
  }

  /** Statuses of an operation's documents in one round trip (the delivery's gate). */
  async statuses(documentKeys: string[]): Promise<{ status: DocumentStatus; stored?: StoredDocument; error?: { code: string; message: string } }[]> {
    const pipeline = this.redis.pipeline();
    for (const key of documentKeys) {
      pipeline.hmget(this.keys.doc(key), 'status', 'checksum', 'storeKey', 'size', 'fileName', 'contentType', 'lastErrorCode', 'lastError');
    }
    const results = (await pipeline.exec()) ?? [];
    return results.map(([err, row]) => {
      if (err) throw err;
      const [status, checksum, storeKey, size, fileName, contentType, code, message] = (row as (string | null)[]).map((v) => v ?? '');
      const s = (status || 'pending') as DocumentStatus;
      if (s === 'stored') return { status: s, stored: { checksum: checksum as string, storeKey: storeKey as string, size: Number(size), fileName: fileName as string, contentType: contentType as string } };
      if (s === 'dead' || s === 'failed') return { status: s, error: { code: code || 'DOCUMENT_FAILED', message: message ?? '' } };
      return { status: s };
    });
  }

  async get(documentKey: string): Promise<DocumentRecord | null> {
    const h = await this.redis.hgetall(this.keys.doc(documentKey));
    if (!h || Object.keys(h).length === 0) return null;
    const str = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);
    return {
      documentKey,
      status: (h.status ?? 'pending') as DocumentStatus,
      attempts: Number(h.attempts ?? 0),
      fence: h.fence ?? '0',
      messageKey: str(h.messageKey),
      ...(h.status === 'stored'
        ? { stored: { checksum: h.checksum ?? '', storeKey: h.storeKey ?? '', size: Number(h.size ?? 0), fileName: h.fileName ?? '', contentType: h.contentType ?? '' } }
        : {}),
      lastErrorCode: str(h.lastErrorCode),
      lastError: str(h.lastError),
      nextAttemptAt: h.nextAttemptAt ? Number(h.nextAttemptAt) : undefined,
      owner: str(h.owner),
      replays: Number(h.replays ?? 0),
      journalIds: h.journalIds ? h.journalIds.split(',') : [],
      job: str(h.job),
    };
  }

  /** How many operations wait, over every shard (the waiting gauge). */
  async waitingCount(): Promise<number> {
    const pipeline = this.redis.pipeline();
    for (const key of this.keys.allWaitingIndexes()) pipeline.zcard(key);
    const results = (await pipeline.exec()) ?? [];
    return results.reduce((sum, [, n]) => sum + Number(n ?? 0), 0);
  }

  /** Waiting operation keys with since when, oldest first (for the dashboard), at most `limit`. */
  async waiting(limit = 100): Promise<{ operationKey: string; since: number }[]> {
    const pipeline = this.redis.pipeline();
    for (const key of this.keys.allWaitingIndexes()) pipeline.zrange(key, 0, limit - 1, 'WITHSCORES');
    const results = (await pipeline.exec()) ?? [];
    const out: { operationKey: string; since: number }[] = [];
    for (const [, flat] of results) {
      const rows = (flat as string[]) ?? [];
      for (let i = 0; i + 1 < rows.length; i += 2) out.push({ operationKey: rows[i] as string, since: Number(rows[i + 1]) });
    }
    return out.sort((a, b) => a.since - b.since).slice(0, limit);
  }
}
