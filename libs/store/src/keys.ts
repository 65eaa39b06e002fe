import { DEFAULT_SHARDS, sha256Hex, shardOf, shardTag, tenantKey } from '@singleshot/core';

/**
 * Every Redis key singleshot uses is built here and nowhere else (BullMQ's
 * queue-keys.ts idea). Keys one Lua script touches together share a hash tag, so
 * the scripts also run on Redis Cluster: an operation's state, lock, history and
 * its journal shard all carry `{sNN}`, the operation key's shard.
 */
export class KeyBuilder {
  constructor(
    readonly prefix: string = 'ss',
    readonly shards: number = DEFAULT_SHARDS,
    /** Queue partitions (1 on a single Redis); see queuePrefixOf. */
    readonly partitions: number = 1,
  ) {
    if (!/^[A-Za-z0-9_.-]+$/.test(prefix)) throw new TypeError(`invalid key prefix "${prefix}"`);
    if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`invalid partition count ${partitions}`);
  }

  /** The same keys with another partition count (reading a former layout while P changes). */
  withPartitions(partitions: number): KeyBuilder {
    return new KeyBuilder(this.prefix, this.shards, partitions);
  }

  shard(hexKey: string): number {
    return shardOf(hexKey, this.shards);
  }

  private tagged(hexKey: string): string {
    return `${this.prefix}:${shardTag(this.shard(hexKey))}`;
  }

  /** Operation state hash. */
  op(operationKey: string): string {
    return `${this.tagged(operationKey)}:op:${operationKey}`;
  }

  /**
   * The operation's large values, kept out of its state hash so that hash stays
   * small enough for Redis's compact (listpack) encoding: every value of a
   * listpack hash must fit `hash-max-listpack-value` (64 bytes by default), and
   * one longer value turns the whole hash into a hash table for good, at about
   * three times the memory. Fields: `job` (the deliver job, from the first claim
   * until the operation is sent) and `lastError` (the last error's text). When
   * neither applies the key does not exist.
   */
  opData(operationKey: string): string {
    return `${this.tagged(operationKey)}:opdata:${operationKey}`;
  }

  /**
   * Delivery feedback of one operation (docs/feedback.md): a hash beside the
   * state, in the operation's shard tag so one script records an event, reads
   * the state and writes the journal together. Fields: `status` (summary),
   * `rank`, `hard`, `count`, `seen:<provider event id>` = the event's sequence
   * number, `ev:<seq>` = the event as JSON (arrival order), `jid:<seq>` = its
   * journal entry's id (JournalReader.forOperation finds them there).
   */
  feedback(operationKey: string): string {
    return `${this.tagged(operationKey)}:feedback:${operationKey}`;
  }

  /** Operation lock: a string holding the current fence token, with a PX lease. */
  lock(operationKey: string): string {
    return `${this.tagged(operationKey)}:lock:${operationKey}`;
  }

  /** Attempt history of one operation (a capped list of JSON entries). */
  history(operationKey: string): string {
    return `${this.tagged(operationKey)}:hist:${operationKey}`;
  }

  /** The journal stream of one shard. */
  journal(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:journal`;
  }

  /** The journal stream an operation writes to. */
  journalOf(operationKey: string): string {
    return this.journal(this.shard(operationKey));
  }

  allJournals(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.journal(i));
  }

  /**
   * Non-terminal operations of one shard (the recovery sweeper's index), scored
   * by when someone should next have touched them. The sign carries one bit of
   * state so the index costs one command per transition: a negative score
   * `-t` means the operation is `in_doubt` (next check at `t`), so
   * `ZCOUNT -inf (0` is the in-doubt gauge. Maintained by the claim, commit and
   * replay scripts; terminal operations are removed.
   */
  activeIndex(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:active`;
  }

  activeIndexOf(operationKey: string): string {
    return this.activeIndex(this.shard(operationKey));
  }

  allActiveIndexes(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.activeIndex(i));
  }

  /** Suppressed operations of one shard by suppression time, so they can be listed and replayed. */
  suppressedIndex(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:suppressed`;
  }

  suppressedIndexOf(operationKey: string): string {
    return this.suppressedIndex(this.shard(operationKey));
  }

  allSuppressedIndexes(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.suppressedIndex(i));
  }

  /**
   * Scheduled operations of one shard (op-schedule.lua) by when they are
   * due: the scheduled gauge, and the dashboard's list. The claim removes an
   * operation, as does a cancel.
   */
  scheduledIndex(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:scheduled`;
  }

  scheduledIndexOf(operationKey: string): string {
    return this.scheduledIndex(this.shard(operationKey));
  }

  allScheduledIndexes(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.scheduledIndex(i));
  }

  /**
   * A producer's cancellation key (cancel-key.lua): the messages of `source`
   * that carry it (one field per message key) and its tombstone once
   * cancelled. Scoped by source and tenant, so one producer cannot cancel
   * another's, nor one tenant another's.
   */
  cancellationKey(source: string, cancellationKey: string, tenant?: string): string {
    const id = tenantKey(tenant, sha256Hex(`${source}:${cancellationKey}`));
    return `${this.tagged(id)}:ckey:${id}`;
  }

  /**
   * A recipient's suppressions and opt-outs, the record of them
   * (suppression-write.lua): field `s|<channel>|<category or *>` (a
   * suppression: hard bounce, complaint, operator) or `p|<channel or *>|<category
   * or *>` (an opt-out), each a JSON value with reason, origin, who and when;
   * `pv` the version of the opt-outs.
   */
  suppressions(recipient: string): string {
    const id = sha256Hex(recipient);
    return `${this.tagged(id)}:supp:${id}`;
  }

  /**
   * The copy of a recipient's suppressions and opt-outs in one shard
   * (suppression-copy.lua), with the same fields and each value the expiry
   * (ms, '' for none): the claim reads the copy in its operation's own shard,
   * in the same step that claims (claim.lua), so a suppression needs no
   * round trip of its own and holds on a Redis Cluster too.
   */
  suppressionCopy(shard: number, recipient: string): string {
    return `${this.prefix}:${shardTag(shard)}:suppx:${sha256Hex(recipient)}`;
  }

  suppressionCopyOf(operationKey: string, recipient: string): string {
    return this.suppressionCopy(this.shard(operationKey), recipient);
  }

  /**
   * Recipients of one shard on the suppression list (a suppression that still
   * holds, or an opt-out), scored by when they went onto it: the list's pages
   * (suppression-page.lua). In the shard of the recipient's record, so the
   * script that changes the record (suppression-write.lua) keeps it in the
   * same step; a score stays while the recipient stays on the list, so a
   * cursor over it never meets a recipient twice.
   */
  suppressionIndex(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:suppidx`;
  }

  suppressionIndexOf(recipient: string): string {
    return this.suppressionIndex(this.shard(sha256Hex(recipient)));
  }

  allSuppressionIndexes(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.suppressionIndex(i));
  }

  /**
   * The recipients of `suppressionIndex(shard)` whose every entry expires,
   * scored by when the last one does: a page drops those past it from both
   * (nothing else changes when a suppression expires).
   */
  suppressionExpiry(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:suppexp`;
  }

  suppressionExpiryOf(recipient: string): string {
    return this.suppressionExpiry(this.shard(sha256Hex(recipient)));
  }

  /** Every change of a suppression or an opt-out: who, when, what (a stream, trimmed by retention). */
  suppressionAudit(): string {
    return `${this.prefix}:suppaudit`;
  }

  /** Document (render operation) state hash: status, fence, attempts, checksum, store key. */
  doc(documentKey: string): string {
    return `${this.tagged(documentKey)}:doc:${documentKey}`;
  }

  /** Document lock: the current render fence token, with a PX lease. */
  docLock(documentKey: string): string {
    return `${this.tagged(documentKey)}:doclock:${documentKey}`;
  }

  /** Operations of one shard waiting for something (a document), scored by since when. */
  waitingIndex(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:waiting`;
  }

  waitingIndexOf(operationKey: string): string {
    return this.waitingIndex(this.shard(operationKey));
  }

  allWaitingIndexes(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.waitingIndex(i));
  }

  /**
   * A digest group (route, recipient, rendered digest key; `digestGroupId`):
   * `seq` (its latest digest), the open digest's `open` (its seq), `n`
   * (positions used), `count`, `bytes`, `openedAt`, `closeAt`, and per closed
   * digest not yet flushed `c:<seq>` (JSON: reason, times, positions). Every
   * key of a group carries the group's shard tag: one slot for its scripts.
   */
  digestGroup(group: string): string {
    return `${this.tagged(group)}:dg:${group}`;
  }

  /** A group's items: field `<seq>:<position>` = the item's JSON, until its digest's flush is enqueued. */
  digestItems(group: string): string {
    return `${this.tagged(group)}:dgi:${group}`;
  }

  /** A message's membership of a group: `<seq>:<position>` (a message joins a group's digests once). */
  digestMember(group: string, messageKey: string): string {
    return `${this.tagged(group)}:dgm:${group}:${messageKey}`;
  }

  /**
   * A digest's record once it closed (digest id, `digestId`): its group, what
   * it was, its members' message keys in order and its flush operation. In
   * the digest id's own slot, so `ops show` finds it from the flush
   * operation's message key (the digest id) alone.
   */
  digestRecord(digestId: string): string {
    return `${this.tagged(digestId)}:dgr:${digestId}`;
  }

  /** Open digests of one shard, `<group>:<seq>` by close time (the open-digests gauge and the admin list). */
  digestOpenIndex(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:dgopen`;
  }

  digestOpenIndexOf(group: string): string {
    return this.digestOpenIndex(this.shard(group));
  }

  allDigestOpenIndexes(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.digestOpenIndex(i));
  }

  /** The HMAC key of document links when none is configured (generated once, SET NX). */
  documentLinkSecret(): string {
    return `${this.prefix}:documents:linksecret`;
  }

  /** The HMAC key of unsubscribe links when none is configured (generated once, SET NX). */
  unsubscribeSecret(): string {
    return `${this.prefix}:unsubscribe:secret`;
  }

  /**
   * The layout version shard `shard`'s keys were written for (layout.ts). One
   * per shard, so on a cluster every master that holds operation state holds
   * its own and a script can read it in the shard it acts on.
   */
  layout(shard: number): string {
    return `${this.prefix}:${shardTag(shard)}:layout`;
  }

  /** The layout key of the operation's shard: read by every script that changes its state. */
  layoutOf(operationKey: string): string {
    return this.layout(this.shard(operationKey));
  }

  /** Every shard's layout key. */
  allLayouts(): string[] {
    return Array.from({ length: this.shards }, (_, i) => this.layout(i));
  }

  /** Held (SET NX PX) by the one delivery process whose recovery sweeper runs. */
  sweeperLock(): string {
    return `${this.prefix}:sweeper:lock`;
  }

  /**
   * Message record: first arrival, sources seen, queued and decided times, and
   * the operation keys the message fanned out to (one field per operation key,
   * see MessageStore.markDecided).
   */
  message(messageKey: string): string {
    return `${this.tagged(messageKey)}:msg:${messageKey}`;
  }

  /**
   * A deliver partition's fair queue between tenants (fair-move.lua): in the
   * partition's queue slot, so its script reads the queue's wait list too.
   */
  fairQueue(partition: number): { ready: string; clock: string; transit: string; listPrefix: string; inPrefix: string } {
    const base = `${this.queuePrefixOf(partition)}:fair`;
    return { ready: `${base}:ready`, clock: `${base}:clock`, transit: `${base}:transit`, listPrefix: `${base}:t:`, inPrefix: `${base}:in:` };
  }

  /** Per-recipient rate-limit window (a sorted set of operation keys by time). */
  rateLimit(scope: string, recipient: string): string {
    const id = sha256Hex(`${scope}:${recipient}`);
    return `${this.tagged(id)}:rl:${id}`;
  }

  /** IMAP cursor of one mailbox folder: UIDVALIDITY and the highest UID handed over. */
  imapCursor(mailboxId: string, folder: string): string {
    return `${this.prefix}:imap:cursor:${mailboxId}:${sha256Hex(folder).slice(0, 16)}`;
  }

  /**
   * What each configured source last reported (one hash: field = source name,
   * value = its JSON status), for `singleshot queues` and the dashboard. A
   * relay rewrites its fields every few seconds; nothing here is needed to
   * deliver, so losing it costs a blank row until the next report.
   */
  sourceStatus(): string {
    return `${this.prefix}:sources`;
  }

  /** Replay-protection set for webhook tokens (e.g. Mailgun's `token`). */
  webhookToken(provider: string, token: string): string {
    return `${this.prefix}:whtoken:${provider}:${sha256Hex(token)}`;
  }

  /**
   * BullMQ's key prefix with one partition, and of the unpartitioned `dead`
   * queue. The braces make every key of a queue share one hash slot, which
   * BullMQ needs on Redis Cluster.
   */
  get queuePrefix(): string {
    return `{${this.prefix}q}`;
  }

  /**
   * BullMQ's key prefix of queue partition `partition`. With one partition it is
   * `queuePrefix` (the single-Redis layout, unchanged). With more, partition p
   * carries the shard tag `{sNN}` of p: each partition is its own slot, and with
   * as many partitions as shards a deliver job's queue keys share the slot (so
   * the master) of its operation's state.
   */
  queuePrefixOf(partition: number): string {
    if (this.partitions === 1) return this.queuePrefix;
    if (!Number.isInteger(partition) || partition < 0 || partition >= this.partitions) {
      throw new RangeError(`partition ${partition} is not in 0..${this.partitions - 1}`);
    }
    return `${this.prefix}:${shardTag(partition)}:q`;
  }
}
