import { feedbackRank, type FeedbackEvent, type FeedbackType, type FeedbackVerdict } from '@singleshot/core';
import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { runScript } from './scripts';
import { decimal } from './script-options';

/** What recording one event did. */
export type FeedbackRecordResult =
  | {
      result: 'recorded' | 'duplicate';
      status: FeedbackType | undefined;
      /** The operation's provider (the config name its send went through), its channel and recipient. */
      provider: string | undefined;
      channel: string | undefined;
      recipient: string | undefined;
      seq: number;
      /**
       * The verdict recorded under this event id: this event's when recorded,
       * the first arrival's when a duplicate (a repeat that classifies
       * otherwise changes nothing, its suppression included). Undefined only
       * when the first arrival's entry cannot be read.
       */
      verdict: FeedbackVerdict | undefined;
    }
  | { result: 'unmatched' };

/** One stored event, in arrival order. */
export interface StoredFeedbackEvent {
  seq: number;
  source: string;
  eventId: string;
  type: FeedbackType;
  hard: boolean;
  suppress: boolean;
  providerType: string;
  recipient?: string;
  providerMessageId?: string;
  occurredAt?: number;
  detail?: string;
  receivedAt: number;
  journalId?: string;
}

/** The verdict of a stored event (the script's JSON), undefined when it cannot be read. */
function storedVerdict(json: string): FeedbackVerdict | undefined {
  try {
    const { type, hard, suppress } = JSON.parse(json) as Partial<StoredFeedbackEvent>;
    return type && typeof hard === 'boolean' && typeof suppress === 'boolean' ? { type, hard, suppress } : undefined;
  } catch {
    return undefined;
  }
}

/** An operation's delivery feedback: the summary and every event in arrival order. */
export interface FeedbackRecord {
  status: FeedbackType;
  /** The summary is a hard bounce (or another failure that will not change). */
  hard: boolean;
  count: number;
  updatedAt?: number;
  events: StoredFeedbackEvent[];
}

export interface FeedbackStoreOptions {
  retentionMs: number;
  now?: () => number;
}

/**
 * Delivery feedback per operation (docs/feedback.md), beside its send state
 * and never in it: the claim and commit scripts do not read it. One script
 * (`feedback-record.lua`) dedupes by the provider's event id, appends,
 * moves the summary forward and writes the journal entry.
 */
export class FeedbackStore {
  private readonly now: () => number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: FeedbackStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Records one event for `operationKey` (once per event id); `unmatched` when no such operation exists. */
  async record(operationKey: string, event: FeedbackEvent): Promise<FeedbackRecordResult> {
    const now = this.now();
    const k = this.keys;
    const { verdict } = event;
    const stored: Omit<StoredFeedbackEvent, 'seq' | 'journalId'> = {
      source: event.source,
      eventId: event.eventId,
      type: verdict.type,
      hard: verdict.hard,
      suppress: verdict.suppress,
      providerType: event.providerType,
      ...(event.recipient !== undefined ? { recipient: event.recipient } : {}),
      ...(event.providerMessageId !== undefined ? { providerMessageId: event.providerMessageId } : {}),
      ...(event.occurredAt !== undefined ? { occurredAt: event.occurredAt } : {}),
      ...(event.detail !== undefined ? { detail: event.detail } : {}),
      receivedAt: now,
    };
    const [result, status, provider, seq, channel, recipient, first] = (await runScript(
      this.redis,
      'feedback-record',
      [k.op(operationKey), k.feedback(operationKey), k.journalOf(operationKey)],
      {
        operationKey,
        eventId: event.eventId,
        source: event.source,
        type: verdict.type,
        rank: decimal(feedbackRank(verdict.type, verdict.hard)),
        hard: verdict.hard ? '1' : '0',
        now: decimal(now),
        retentionMs: decimal(this.options.retentionMs),
        journalMinId: decimal(now - this.options.retentionMs),
      },
      [JSON.stringify(stored)],
    )) as [string, string, string, string, string, string, string];
    if (result === 'unmatched') return { result };
    return {
      result: result === 'recorded' ? 'recorded' : 'duplicate',
      status: (status || undefined) as FeedbackType | undefined,
      provider: provider || undefined,
      channel: channel || undefined,
      recipient: recipient || undefined,
      seq: Number(seq),
      verdict: result === 'recorded' ? verdict : storedVerdict(first),
    };
  }

  /** The operation's feedback, or undefined when none arrived (or it expired). */
  async read(operationKey: string): Promise<FeedbackRecord | undefined> {
    const hash = await this.redis.hgetall(this.keys.feedback(operationKey));
    if (!hash.status) return undefined;
    const events: StoredFeedbackEvent[] = [];
    for (const [field, value] of Object.entries(hash)) {
      if (!field.startsWith('ev:')) continue;
      const seq = Number(field.slice(3));
      try {
        const parsed = JSON.parse(value) as Omit<StoredFeedbackEvent, 'seq'>;
        const journalId = hash[`jid:${seq}`];
        events.push({ ...parsed, seq, ...(journalId ? { journalId } : {}) });
      } catch {
        // Written by our script only; an unreadable entry is skipped rather than hiding the others.
      }
    }
    events.sort((a, b) => a.seq - b.seq);
    return {
      status: hash.status as FeedbackType,
      hard: hash.hard === '1',
      count: Number(hash.count ?? events.length),
      ...(hash.updatedAt ? { updatedAt: Number(hash.updatedAt) } : {}),
      events,
    };
  }
}
