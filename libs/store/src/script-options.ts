/**
 * The options each Lua script takes, by script name. Every script gets them as
 * one packed argument, ARGV[1] = JSON, read by name with `cjson.decode` (BullMQ
 * packs its options the same way, with msgpack): no positional list to keep in
 * order by hand. Documents stored as they are (a deliver job, history entries)
 * follow as ARGV[2..], so they are not encoded twice. Optional fields are left
 * out of the JSON when they do not apply (Lua sees nil). script-options.test.ts
 * checks that the fields each script reads are exactly the ones named here.
 */
export interface ScriptOptions {
  'claim-4': {
    leaseMs: number;
    now: number;
    owner: string;
    operationKey: string;
    messageKey: string;
    recipient: string;
    channel: string;
    retentionMs: number;
    journalMinId: number;
  };
  'commit-6': {
    fence: string;
    outcome: 'sent' | 'in_doubt' | 'failed' | 'dead' | 'suppressed' | 'released';
    now: number;
    retentionMs: number;
    journalMinId: number;
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
    nextAttemptAt?: number;
  };
  'doc-claim-3': { leaseMs: number; now: number; owner: string; retentionMs: number; messageKey: string };
  'doc-commit-3': {
    fence: string;
    outcome: 'stored' | 'failed' | 'dead';
    now: number;
    retentionMs: number;
    journalMinId: number;
    documentKey: string;
    name: string;
    messageKey: string;
    checksum?: string;
    size?: number;
    storeKey?: string;
    fileName?: string;
    contentType?: string;
    errorCode?: string;
    errorMessage?: string;
    nextAttemptAt?: number;
  };
  'doc-replay-2': { now: number; by: string; journalMinId: number; documentKey: string };
  'op-wait-2': {
    mode: 'set' | 'clear';
    operationKey: string;
    now: number;
    waitingFor?: string;
    waitingKey?: string;
    retentionMs?: number;
    messageKey?: string;
    recipient?: string;
    channel?: string;
  };
  'extend-lock-2': { fence: string; leaseMs: number; now: number };
  'imap-cursor-advance-1': { uidValidity: string; uid: number; now: number };
  'index-touch-1': { operationKey: string; dueAt: number };
  'mark-waiting-1': { reason: string; untilMs: number; retentionMs: number };
  'message-arrive-1': { now: number; via: string; retentionMs: number };
  'mutex-acquire-1': { owner: string; leaseMs: number };
  'mutex-release-1': { owner: string };
  'rate-limit-1': { now: number; windowMs: number; max: number; operationKey: string; force: boolean };
  'replay-5': { now: number; by: string; via: string; retentionMs: number; journalMinId: number; operationKey: string };
}

export type ScriptName = keyof ScriptOptions;
