import { describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { JournalEntry, OperationRecord } from '@singleshot/store';
import { buildStory } from './story';
import { storyText } from './story-text';

const messageKey = eventMessageKey('shop', 'evt-1');
const opKey = operationKey({ messageKey, action: parseAction('notify'), recipient: 'a@example.com', channel: 'webhook' });
const T = 1_700_000_000_000;

const record: OperationRecord = { operationKey: opKey, status: 'sent', fence: '2', attempts: 2, messageKey, recipient: 'a@example.com', channel: 'webhook', provider: 'primary', externalId: 'x-1', replays: 0, journalIds: [] };
const journal = (id: string, ts: number, fields: Record<string, string>): JournalEntry => ({ id, shard: 0, type: fields.type as string, ts, fields: { ...fields, ts: String(ts) } });

describe('buildStory', () => {
  it('puts every step of an in-doubt attempt and its reconciliation on one axis, same-instant steps in the order they happen', () => {
    const story = buildStory({
      key: messageKey,
      message: { messageKey, tenant: 'default', firstArrivalAt: T, lastArrivalAt: T + 900, firstVia: 'api', arrivals: 3, via: { api: 2, imap: 1 }, viaFirstAt: { imap: T + 500 }, queuedAt: T + 5, decidedAt: T + 20, trace: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', operations: [opKey], digests: [] },
      routes: [{ name: 'other', action: 'notify', channel: 'sms' }, { name: 'orders', action: 'notify', channel: 'webhook' }],
      operations: [
        {
          operationKey: opKey,
          record,
          // The deliver job is gone once sent: the route comes from the configured routes.
          job: undefined,
          dead: null,
          history: [
            { at: T + 200, attempt: 1, fence: '1', outcome: 'in_doubt', step: 'send', provider: 'primary', errorCode: 'TIMEOUT', durationMs: 150 },
            { at: T + 400, attempt: 2, fence: '2', outcome: 'sent', step: 'reconcile', provider: 'primary', externalId: 'x-1', note: 'reconciled by lookup' },
          ],
          journal: [journal('1-0', T + 200, { type: 'in_doubt', op: opKey, fence: '1', provider: 'primary', err: 'TIMEOUT' }), journal('2-0', T + 400, { type: 'sent', op: opKey, fence: '2', provider: 'primary', extId: 'x-1' })],
        },
      ],
    });
    expect(story).toMatchObject({ kind: 'message', messageKey, routes: ['orders'], traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    expect(story.operations[0]).toMatchObject({ route: 'orders', status: 'sent', fence: '2', attempts: 2 });
    expect(story.events.map((e) => `${e.at - T}:${e.kind}`)).toEqual([
      '0:arrival',
      '5:queued',
      '20:decided',
      '50:claim',
      '200:in_doubt',
      '200:in_doubt',
      '400:claim',
      '400:reconcile',
      '400:sent',
      '500:arrival',
      '900:arrival',
    ]);
    expect(story.events[4]?.title).toBe('attempt #1: primary left it in doubt (TIMEOUT)');
    expect(story.events[5]?.title).toContain('in doubt: committed under fence 1');
    expect(story.events[7]?.title).toBe('reconciliation: asked primary by idempotency key, it found it (x-1)');
    expect(story.events[9]?.title).toBe('arrival via imap');
    const text = storyText(story);
    expect(text[0]).toBe(`message ${messageKey}`);
    expect(text).toContain('trace id  4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('tells a dead operation with its DLQ record, and an operation key names its message', () => {
    const dead: OperationRecord = { ...record, status: 'dead', fence: '1', attempts: 1, provider: undefined, externalId: undefined, reason: 'permanent' };
    const story = buildStory({
      key: opKey,
      message: null,
      operations: [
        {
          operationKey: opKey,
          record: dead,
          job: { route: 'orders', recipient: 'a@example.com', channel: 'webhook' },
          history: [{ at: T + 10, attempt: 1, fence: '1', outcome: 'dead', step: 'send', provider: 'primary', errorCode: 'HTTP_422', durationMs: 5 }],
          journal: [journal('3-0', T + 11, { type: 'dead', op: opKey, fence: '1', reason: 'permanent', err: 'HTTP_422' })],
          dead: { operationKey: opKey, job: {}, reason: 'permanent', error: { code: 'HTTP_422', message: 'rejected' }, attempts: [], diedAt: T + 11 },
        },
      ],
    });
    expect(story).toMatchObject({ kind: 'operation', messageKey, routes: ['orders'], traceId: undefined });
    expect(story.events.map((e) => e.kind)).toEqual(['claim', 'attempt', 'dead', 'dlq']);
    expect(story.events[3]?.title).toBe('in the DLQ: permanent (HTTP_422)');
  });
});
