import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import type { ReplicaWaits } from './replica-barrier';
import { decimal } from './script-options';
import { runScript, type ScriptOptions } from './scripts';

/** Where a suppression came from. */
export type SuppressionOrigin = 'bounce' | 'complaint' | 'unsubscribe' | 'operator' | 'feedback';

/** One suppression: a recipient no operation of `channel` (and `category`, or all) is sent to. */
export interface Suppression {
  channel: string;
  recipient: string;
  /** Absent: every category of the channel. */
  category?: string;
  reason: string;
  origin: SuppressionOrigin | string;
  by: string;
  at: number;
  /** ms since the epoch; absent: until removed. */
  expiresAt?: number;
}

/** One opt-out: a channel (absent: all) and a category (absent: all). */
export interface OptOut {
  channel?: string;
  category?: string;
}

/** A recipient's suppressions and opt-outs, as the record keeps them. */
export interface RecipientSuppressions {
  recipient: string;
  suppressions: Suppression[];
  optOuts: Array<OptOut & { at: number; by: string }>;
  /** The version of the opt-outs (0 before the first change). */
  version: number;
}

const any = (v: string | undefined) => v ?? '*';
const suppressionField = (s: Pick<Suppression, 'channel' | 'category'>) => `s|${s.channel}|${any(s.category)}`;
const optOutField = (o: OptOut) => `p|${any(o.channel)}|${any(o.category)}`;

/** The KEYS of suppression-write.lua for a recipient: their record and their shard's list indexes. */
export function recordKeys(keys: KeyBuilder, recipient: string): string[] {
  return [keys.suppressions(recipient), keys.suppressionIndexOf(recipient), keys.suppressionExpiryOf(recipient)];
}

/**
 * Suppressions and opt-outs (docs/feedback.md). Each change goes to the
 * recipient's record (with their place on the list SuppressionList reads, in
 * the same step), then to the copy in every shard, before it returns:
 * the claim of any operation for that recipient reads the copy in its own
 * shard in the same step that claims (claim.lua), so once a change has
 * returned, no claim after it sends to a suppressed recipient, scheduled and
 * waiting operations included, and none needs a round trip for the check.
 */
export class Suppressions {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: {
      retentionMs: number;
      now?: () => number;
      /**
       * Replica waits of the connection on a Redis Cluster: `add` returns only
       * once every key it wrote (`keysOf`) is on a replica, so an answer that
       * follows it stands through a failover and no claim after it sends to
       * the recipient. Absent on a single Redis, or where nothing is answered
       * on the strength of the add.
       */
      replicas?: ReplicaWaits | undefined;
    },
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Adds a suppression; false when the same one exists and still holds (the first one stands; an expired one is replaced). */
  async add(entry: Omit<Suppression, 'at'> & { at?: number }): Promise<boolean> {
    const at = entry.at ?? this.now();
    const field = suppressionField(entry);
    const value = JSON.stringify({ reason: entry.reason, origin: entry.origin, by: entry.by, at, ...(entry.expiresAt !== undefined ? { expiresAt: entry.expiresAt } : {}) });
    const [changed, , expiry] = (await this.write(entry.recipient, { mode: 'add', field, value })) as [number, string, string];
    // Written to every shard again even when it existed (with the expiry of the one that stands): a change
    // interrupted half-way is completed by its repeat.
    await this.copy(entry.recipient, { set: [field, expiry], remove: [] });
    await this.touch(entry.recipient, changed === 1 ? 'add' : 'add_existing', { field, by: entry.by, reason: entry.reason, origin: entry.origin });
    // An existing one too: its copies were written again, and the add that made it may not be on a replica yet.
    if (this.options.replicas) await this.options.replicas.after(this.keysOf(entry.recipient));
    return changed === 1;
  }

  /** Removes a suppression; nothing suppressed before is sent again (a removal applies to what comes next). */
  async remove(entry: Pick<Suppression, 'channel' | 'recipient' | 'category'> & { by: string }): Promise<boolean> {
    const field = suppressionField(entry);
    const [changed] = (await this.write(entry.recipient, { mode: 'remove', field })) as [number, string];
    await this.copy(entry.recipient, { set: [], remove: [field] });
    await this.touch(entry.recipient, 'remove', { field, by: entry.by });
    return changed === 1;
  }

  /** Replaces a recipient's opt-outs (PUT semantics); returns their new version. */
  async setOptOuts(recipient: string, optOuts: readonly OptOut[], by: string): Promise<number> {
    const now = this.now();
    const fields = [...new Set(optOuts.map(optOutField))];
    const [, version, ...removed] = (await this.write(recipient, {
      mode: 'preferences',
      optOuts: fields,
      detail: JSON.stringify({ by, at: now }),
    })) as [number, string, ...string[]];
    await this.copy(recipient, { set: fields.flatMap((f) => [f, '']), remove: removed, version });
    await this.touch(recipient, 'opt_outs', { fields: fields.join(','), by, version });
    return Number(version);
  }

  /**
   * Adds one opt-out to those a recipient has (one-click unsubscribe), in one
   * step with the version, so a concurrent PUT is never lost; false when the
   * recipient had that opt-out already (nothing written).
   */
  async addOptOut(recipient: string, optOut: OptOut, by: string): Promise<boolean> {
    const now = this.now();
    const field = optOutField(optOut);
    const [changed, version] = (await this.write(recipient, {
      mode: 'opt-out',
      optOuts: [field],
      detail: JSON.stringify({ by, at: now }),
    })) as [number, string];
    if (changed !== 1) return false;
    await this.copy(recipient, { set: [field, ''], remove: [], version });
    await this.touch(recipient, 'opt_out', { field, by, version });
    return true;
  }

  /** A recipient's suppressions and opt-outs. */
  async get(recipient: string): Promise<RecipientSuppressions> {
    const h = await this.redis.hgetall(this.keys.suppressions(recipient));
    const out: RecipientSuppressions = { recipient, suppressions: [], optOuts: [], version: Number(h.pv ?? 0) };
    for (const [field, value] of Object.entries(h)) {
      const [kind, channel, category] = field.split('|');
      if (kind !== 's' && kind !== 'p') continue;
      const detail = JSON.parse(value) as Record<string, unknown>;
      const scope = { ...(channel && channel !== '*' ? { channel } : {}), ...(category && category !== '*' ? { category } : {}) };
      if (kind === 's') {
        out.suppressions.push({ channel: channel ?? '', recipient, ...scope, reason: String(detail.reason ?? ''), origin: String(detail.origin ?? ''), by: String(detail.by ?? ''), at: Number(detail.at ?? 0), ...(detail.expiresAt !== undefined ? { expiresAt: Number(detail.expiresAt) } : {}) });
      } else {
        out.optOuts.push({ ...scope, at: Number(detail.at ?? 0), by: String(detail.by ?? '') });
      }
    }
    return out;
  }

  /** Every key a change of `recipient` writes (the record, its shard's list indexes and each shard's copy), for a replica wait. */
  keysOf(recipient: string): string[] {
    return [
      ...recordKeys(this.keys, recipient),
      ...Array.from({ length: this.keys.shards }, (_, shard) => this.keys.suppressionCopy(shard, recipient)),
    ];
  }

  /** The change in the recipient's record and their place on the list, one step (suppression-write.lua). */
  private write(recipient: string, change: Omit<ScriptOptions['suppression-write'], 'now' | 'recipient'>): Promise<unknown> {
    return runScript(this.redis, 'suppression-write', recordKeys(this.keys, recipient), { ...change, now: decimal(this.now()), recipient });
  }

  /** The change in the copy of every shard, all sent at once (one round trip of latency). */
  private async copy(recipient: string, change: { set: string[]; remove: string[]; version?: string }): Promise<void> {
    await Promise.all(
      Array.from({ length: this.keys.shards }, (_, shard) => runScript(this.redis, 'suppression-copy', [this.keys.suppressionCopy(shard, recipient)], change)),
    );
  }

  /** The audit entry of a change. */
  private async touch(recipient: string, change: string, detail: Record<string, string>): Promise<void> {
    const now = this.now();
    await this.redis.xadd(this.keys.suppressionAudit(), 'MINID', '~', String(now - this.options.retentionMs), '*', 'change', change, 'recipient', recipient, ...Object.entries(detail).flat());
  }
}
