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
  'claim-5': {
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
  };
  'commit-7': {
    fence: string;
    outcome: 'sent' | 'in_doubt' | 'failed' | 'dead' | 'suppressed' | 'released';
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
  };
  'doc-claim-3': { leaseMs: Decimal; now: Decimal; leaseUntil: Decimal; owner: string; retentionMs: Decimal; messageKey: string };
  'doc-commit-3': {
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
  'doc-replay-2': { now: Decimal; by: string; journalMinId: Decimal; documentKey: string };
  'op-wait-2': {
    mode: 'set' | 'clear';
    operationKey: string;
    now: Decimal;
    waitingFor?: string;
    waitingKey?: string;
    retentionMs?: Decimal;
    messageKey?: string;
    recipient?: string;
    channel?: string;
  };
  /** leaseUntil = now + leaseMs */
  'extend-lock-2': { fence: string; leaseMs: Decimal; leaseUntil: Decimal };
  'imap-cursor-advance-1': { uidValidity: string; uid: number; now: Decimal };
  'index-touch-1': { operationKey: string; dueAt: Decimal };
  'mark-waiting-1': { reason: string; untilMs: Decimal; retentionMs: Decimal };
  'message-arrive-1': { now: Decimal; via: string; retentionMs: Decimal };
  /** trace: the decision's W3C traceparent, only when tracing is on (the story page shows its trace id). */
  'message-decided-1': { now: Decimal; operationKeys: string[]; retentionMs: Decimal; trace?: string };
  'mutex-acquire-1': { owner: string; leaseMs: Decimal };
  'mutex-release-1': { owner: string };
  /** windowStart = now - windowMs: entries at or before it have left the window. */
  'rate-limit-1': { now: Decimal; windowStart: Decimal; windowMs: Decimal; max: number; operationKey: string; force: boolean };
  'replay-6': { now: Decimal; by: string; via: string; retentionMs: Decimal; journalMinId: Decimal; operationKey: string };
}

export type ScriptName = keyof ScriptOptions;

/** An integer (ms since the epoch, a duration in ms, a size) as a decimal string, e.g. `decimal(Date.now())`. */
export type Decimal = string;

/** The `Decimal` of an integer. */
export function decimal(n: number): Decimal {
  return String(n);
}
