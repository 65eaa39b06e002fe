import type { CommitOutcome, WaitMark } from '@singleshot/core';

/**
 * The options each Lua script takes, by script name. Every script gets them as
 * one packed argument, ARGV[1] = JSON, read by name with `cjson.decode` (BullMQ
 * packs its options the same way, with msgpack): no positional list to keep in
 * order by hand. Documents stored as they are (a deliver job, history entries)
 * follow as ARGV[2..], so they are not encoded twice. Optional fields are left
 * out of the JSON when they do not apply (Lua sees nil). script-options.test.ts
 * checks that the fields each script reads are exactly the ones named here.
 *
 * Times, durations and other integers a script hands on to Redis are `Decimal`
 * strings, computed on this side (`leaseUntil`, not `now + leaseMs` in Lua):
 * Redis 7.0 turns a Lua number argument of `redis.call` into text with
 * `snprintf("%.17g")`, many times what a string argument costs, and a
 * notification's scripts pass dozens of them.
 */
export interface ScriptOptions {
  'claim': {
    leaseMs: Decimal;
    now: Decimal;
    /** now + leaseMs */
    leaseUntil: Decimal;
    owner: string;
    operationKey: string;
    messageKey: string;
    recipient: string;
    channel: string;
    retentionMs: Decimal;
    journalMinId: Decimal;
    /** The route's category ('' for none). */
    category: string;
    /** The route must go: opt-outs do not hold it back. */
    required: boolean;
    /** After an earlier holder's lease ran out, how long its call may still reach the provider (see claim.lua). */
    settleMs: Decimal;
    /** Held back although nothing ended it (include/wait.lua): why, until when; for a document what and which key. */
    waitReason?: WaitMark;
    waitUntil?: Decimal;
    waitingFor?: string;
    waitingKey?: string;
    /** Over a per-recipient limit, read before the claim: the note a first claim that ends `suppressed` (rate_limit) keeps as its error. */
    limitNote?: string;
  };
  'commit': {
    fence: string;
    outcome: CommitOutcome;
    now: Decimal;
    retentionMs: Decimal;
    journalMinId: Decimal;
    operationKey: string;
    messageKey: string;
    recipient: string;
    channel: string;
    provider?: string;
    externalId?: string;
    errorCode?: string;
    errorMessage?: string;
    reason?: string;
    releaseTo?: 'pending' | 'failed' | 'in_doubt';
    refundAttempt?: boolean;
    nextAttemptAt?: Decimal;
    /** With `released`: why it waits until nextAttemptAt. */
    waitReason?: WaitMark;
  };
  'cancel-op': {
    now: Decimal;
    operationKey: string;
    messageKey: string;
    recipient: string;
    channel: string;
    reason: string;
    by: string;
    retentionMs: Decimal;
    journalMinId: Decimal;
  };
  'cancel-message': { now: Decimal; recipients?: string[]; reason: string; by: string; retentionMs: Decimal };
  'cancel-key': { mode: 'join' | 'cancel'; now: Decimal; messageKey?: string; recipients?: string[]; reason?: string; by?: string; retentionMs: Decimal };
  'doc-claim': { leaseMs: Decimal; now: Decimal; leaseUntil: Decimal; owner: string; retentionMs: Decimal; messageKey: string };
  'doc-commit': {
    fence: string;
    outcome: 'stored' | 'failed' | 'dead';
    now: Decimal;
    retentionMs: Decimal;
    journalMinId: Decimal;
    documentKey: string;
    name: string;
    messageKey: string;
    checksum?: string;
    size?: Decimal;
    storeKey?: string;
    fileName?: string;
    contentType?: string;
    errorCode?: string;
    errorMessage?: string;
    nextAttemptAt?: Decimal;
  };
  'doc-replay': { now: Decimal; by: string; journalMinId: Decimal; documentKey: string };
  /** leaseUntil = now + leaseMs */
  'extend-lock': { fence: string; leaseMs: Decimal; leaseUntil: Decimal };
  'feedback-record': {
    operationKey: string;
    eventId: string;
    /** The feedback endpoint that received it (ses, sendgrid, postmark, mailgun, twilio). */
    source: string;
    type: string;
    rank: Decimal;
    hard: '0' | '1';
    now: Decimal;
    retentionMs: Decimal;
    journalMinId: Decimal;
  };
  'imap-cursor-advance': { uidValidity: string; uid: number; now: Decimal };
  'index-touch': { operationKey: string; dueAt: Decimal };
  /** tenant: only for a tenant other than the default one (core tenant.ts). */
  'message-arrive': { now: Decimal; via: string; retentionMs: Decimal; tenant?: string };
  /** closeAt: when a digest opened by this call closes (fixed, aligned or daily; computed in TypeScript). */
  'digest-join': { now: Decimal; group: string; closeAt: Decimal; maxItems: Decimal; maxBytes: Decimal; retentionMs: Decimal; route: string; recipient: string; key: string };
  'digest-close': { mode: 'close' | 'flushed'; seq: Decimal; now: Decimal; group: string };
  'digest-remove': { retentionMs: Decimal };
  /**
   * targets[i] = `channel:recipient` of operationKeys[i]; trace: the decision's W3C traceparent, only when tracing is on (the story page shows its trace id);
   * digestTargets[i]: JSON [route, recipient, key, channel] of digestGroups[i].
   */
  'message-decided': { now: Decimal; operationKeys: string[]; targets: string[]; retentionMs: Decimal; trace?: string; digestGroups?: string[]; digestTargets?: string[] };
  'mutex-acquire': { owner: string; leaseMs: Decimal };
  'mutex-release': { owner: string };
  /** version: a layout version or `migrating:<n>`; expect: what the shard must hold ('' for none). */
  'layout-stamp': { version: string; expect: string };
  /** sweepAt > dueAt: when the sweeper looks at an operation nobody claimed. */
  'op-schedule': {
    now: Decimal;
    dueAt: Decimal;
    sweepAt: Decimal;
    reason: 'send_at' | 'delay';
    operationKey: string;
    messageKey: string;
    recipient: string;
    channel: string;
    retentionMs: Decimal;
    journalMinId: Decimal;
  };
  'suppression-write': {
    mode: 'add' | 'remove' | 'preferences' | 'opt-out';
    now: Decimal;
    /** The index member (the record key is its hash). */
    recipient: string;
    field?: string;
    value?: string;
    optOuts?: string[];
    detail?: string;
  };
  /** score and recipient: the cursor (absent: from the top). */
  'suppression-page': { now: Decimal; count: number; score?: Decimal; recipient?: string };
  /** set = [field, expiry, ...] (expiry '' for none). */
  'suppression-copy': { set: string[]; remove: string[]; version?: Decimal };
  /** windowStart = now - windowMs: entries at or before it have left the window. */
  'fair-move': {
    /** A tenant's list key is this and its id (the partition's hash slot). */
    listPrefix: string;
    /** The next `count` documents are `tenant`'s, at `weight` (an integer, 1 or more), of its bulk class when `bulk`, with in-flight cap `cap` (0: none). */
    adds: Array<{ tenant: string; weight: number; count: number; bulk: boolean; cap: number }>;
    /** A tenant's in-flight set is this and its id. */
    inPrefix: string;
    /** Moved operations of capped tenants that workers started, and those whose attempt ended for good. */
    started: Array<{ tenant: string; keys: string[] }>;
    ended: Array<{ tenant: string; keys: string[] }>;
    /** now + how long a started, and a moved but not started, operation counts against its tenant's cap unheard. */
    startedUntil: Decimal;
    movedUntil: Decimal;
    /** Operations moved and not yet started by a worker, at most. */
    window: number;
    /** Moved operations workers started since they last said (0 from a producer). */
    taken: Decimal;
    /** A tag's advance at weight 1. */
    scale: Decimal;
    now: Decimal;
  };
  'rate-limit': { now: Decimal; windowStart: Decimal; windowMs: Decimal; max: number; operationKey: string; force: boolean };
  'replay': { now: Decimal; by: string; via: string; retentionMs: Decimal; journalMinId: Decimal; operationKey: string };
}

export type ScriptName = keyof ScriptOptions;

/** An integer (ms since the epoch, a duration in ms, a size) as a decimal string, e.g. `decimal(Date.now())`. */
export type Decimal = string;

/** The `Decimal` of an integer. */
export function decimal(n: number): Decimal {
  return String(n);
}
