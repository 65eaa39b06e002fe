import { operationKey as operationKeyOf, parseAction } from '@singleshot/core';
import { parseTraceparent } from '@singleshot/tracing';
import type { AttemptRecord, JournalEntry, MessageRecord } from '@singleshot/store';
import type { Story, StoryEvent, StoryEventKind, StoryInput, StoryOperation, StoryOperationInput } from './story-types';

/**
 * Steps of one instant in the order they happen: an arrival before its
 * decision, a claim before its attempt, the attempt before the commit's
 * journal entry, the DLQ after the `dead` it follows.
 */
const RANK: Record<StoryEventKind, number> = {
  arrival: 0,
  queued: 1,
  decided: 2,
  claim: 3,
  reconcile: 4,
  attempt: 5,
  in_doubt: 5,
  sent: 6,
  suppressed: 6,
  dead: 6,
  journal: 6,
  dlq: 7,
  replayed: 8,
};

/**
 * The story of a message or operation key: every step the store recorded, on
 * one time axis. Pure: the dashboard's story page and `singleshot story`
 * render the same result (story-reader.ts reads its input).
 */
export function buildStory(input: StoryInput): Story {
  const routeOf = routeFinder(input);
  const events: Array<StoryEvent & { seq: number }> = [];
  const add = (event: StoryEvent) => events.push({ ...event, seq: events.length });
  const kind: Story['kind'] = input.message && input.message.messageKey === input.key ? 'message' : 'operation';
  const routes = [...new Set(input.operations.map(routeOf).filter((r): r is string => r !== undefined))].sort();
  if (input.message) messageEvents(input.message, routes, input.operations.length, add);
  for (const op of input.operations) operationEvents(op, add);
  events.sort((a, b) => a.at - b.at || RANK[a.kind] - RANK[b.kind] || a.seq - b.seq);
  return {
    key: input.key,
    kind,
    messageKey: input.message?.messageKey ?? input.operations[0]?.record?.messageKey,
    traceId: parseTraceparent(input.message?.trace)?.traceId ?? traceIdOf(input.operations),
    routes,
    operations: input.operations.map((op) => summary(op, routeOf(op))),
    events: events.map(({ seq: _seq, ...event }) => event),
  };
}

function messageEvents(message: MessageRecord, routes: string[], operations: number, add: (e: StoryEvent) => void): void {
  const firstAt = { ...message.viaFirstAt };
  // The first arrival's channel is kept as firstVia with firstArrivalAt (records of every version).
  if (message.firstVia && message.firstArrivalAt !== undefined) firstAt[message.firstVia] ??= message.firstArrivalAt;
  const vias = Object.entries(message.via).sort(([a], [b]) => (firstAt[a] ?? Infinity) - (firstAt[b] ?? Infinity) || a.localeCompare(b));
  for (const [via, count] of vias) {
    const at = firstAt[via] ?? message.firstArrivalAt;
    if (at === undefined) continue;
    const first = via === message.firstVia;
    add({
      at,
      kind: 'arrival',
      title: `${first ? 'first arrival' : 'arrival'} via ${via}${count > 1 ? ` (${count} arrivals via ${via})` : ''}`,
      detail: { via, arrivals: String(count), ...(first ? { result: 'accepted' } : { result: 'duplicate' }) },
    });
  }
  if (message.arrivals > 1 && message.lastArrivalAt !== undefined && message.lastArrivalAt !== message.firstArrivalAt) {
    add({ at: message.lastArrivalAt, kind: 'arrival', title: `last arrival (${message.arrivals} in all, each after the first a duplicate)`, detail: { arrivals: String(message.arrivals) } });
  }
  if (message.queuedAt !== undefined) add({ at: message.queuedAt, kind: 'queued', title: 'decide job in Redis: the producer was answered accepted', detail: {} });
  if (message.decidedAt !== undefined) {
    const routeText = routes.length ? `route ${routes.join(', ')}` : 'no route';
    add({ at: message.decidedAt, kind: 'decided', title: `decided: ${routeText} → ${operations} operation${operations === 1 ? '' : 's'}`, detail: { routes: routes.join(', '), operations: String(operations) } });
  }
}

function operationEvents(op: StoryOperationInput, add: (e: StoryEvent) => void): void {
  const operationKey = op.operationKey;
  const claims = new Map<string, { at: number; attempt: number; fence: string }>();
  for (const h of op.history) {
    if (h.step === 'replay') continue;
    const id = `${h.attempt}/${h.fence}`;
    const started = h.at - (h.durationMs ?? 0);
    const seen = claims.get(id);
    if (!seen || started < seen.at) claims.set(id, { at: started, attempt: h.attempt, fence: h.fence });
  }
  for (const c of claims.values()) add({ at: c.at, kind: 'claim', operationKey, title: `claim #${c.attempt}: lock taken under fence ${c.fence}`, detail: { attempt: String(c.attempt), fence: c.fence } });
  const journaledReplay = op.journal.some((e) => e.type === 'replayed');
  for (const h of op.history) {
    const event = attemptEvent(h, operationKey);
    if (event && !(h.step === 'replay' && journaledReplay)) add(event);
  }
  for (const entry of op.journal) add(journalEvent(entry, operationKey));
  if (op.dead) {
    const { reason, error, diedAt } = op.dead;
    add({ at: diedAt, kind: 'dlq', operationKey, title: `in the DLQ: ${reason} (${error.code})`, detail: { reason, error: `${error.code}: ${error.message}`, attempts: String(op.dead.attempts.length) } });
  }
}

/** One history record: a provider call, a reconciliation, a skipped provider, a limit or a replay. */
function attemptEvent(h: AttemptRecord, operationKey: string): StoryEvent | undefined {
  const detail: Record<string, string> = { attempt: String(h.attempt), fence: h.fence };
  if (h.provider) detail.provider = h.provider;
  if (h.externalId) detail.externalId = h.externalId;
  if (h.errorCode) detail.error = h.error ? `${h.errorCode}: ${h.error}` : h.errorCode;
  if (h.durationMs !== undefined) detail.duration = `${h.durationMs} ms`;
  if (h.note) detail.note = h.note;
  const provider = h.provider ?? 'provider';
  switch (h.step ?? 'send') {
    case 'reconcile': {
      const verdict = h.outcome === 'sent' ? `found it (${h.externalId ?? ''})` : h.outcome === 'failed' ? 'does not have it' : `could not tell (${h.errorCode ?? 'error'})`;
      return { at: h.at, kind: 'reconcile', operationKey, title: `reconciliation: asked ${provider} by idempotency key, it ${verdict}`, detail };
    }
    case 'replay':
      return { at: h.at, kind: 'replayed', operationKey, title: `replayed by ${h.by ?? 'an operator'}${h.via ? ` via ${h.via}` : ''}`, detail };
    case 'breaker_skip':
      return { at: h.at, kind: 'attempt', operationKey, title: `${provider} skipped: its circuit breaker is open`, detail };
    case 'rate_limit':
      return { at: h.at, kind: 'suppressed', operationKey, title: 'over a per-recipient limit', detail };
    default: {
      const answer = h.outcome === 'sent' ? `took it (${h.externalId ?? ''})` : h.outcome === 'in_doubt' ? `left it in doubt (${h.errorCode ?? ''})` : `${h.outcome} (${h.errorCode ?? ''})`;
      return { at: h.at, kind: h.outcome === 'in_doubt' ? 'in_doubt' : 'attempt', operationKey, title: `attempt #${h.attempt}: ${provider} ${answer}`, detail };
    }
  }
}

const JOURNAL_KINDS: Record<string, StoryEventKind> = { sent: 'sent', in_doubt: 'in_doubt', dead: 'dead', suppressed: 'suppressed', replayed: 'replayed' };

function journalEvent(entry: JournalEntry, operationKey: string): StoryEvent {
  const f = entry.fields;
  const detail: Record<string, string> = { journal: entry.id };
  for (const [name, value] of [['provider', f.provider], ['externalId', f.extId], ['fence', f.fence], ['error', f.err], ['reason', f.reason], ['by', f.by], ['via', f.via]] as const) {
    if (value) detail[name] = value;
  }
  const titles: Record<string, string> = {
    sent: `sent: committed under fence ${f.fence ?? '?'} (${f.provider ?? ''} ${f.extId ?? ''})`,
    in_doubt: `in doubt: committed under fence ${f.fence ?? '?'}; the next claim reconciles first`,
    dead: `dead: ${f.reason ?? ''}${f.err ? ` (${f.err})` : ''}; recorded in the DLQ`,
    suppressed: `suppressed: ${f.reason ?? ''}`,
    replayed: `replayed by ${f.by ?? 'an operator'}${f.via ? ` via ${f.via}` : ''}: back to pending under the same key`,
    duplicate: 'duplicate: a claim found it already sent',
    feedback: `feedback from ${f.provider ?? '?'}: ${f.reason ?? ''} (${f.extId ?? ''})`,
  };
  return { at: entry.ts, kind: JOURNAL_KINDS[entry.type] ?? 'journal', operationKey, title: titles[entry.type] ?? `journal: ${entry.type}`, detail };
}

/** An operation's route: its deliver job's, else the configured route whose action and channel make its key. */
function routeFinder(input: StoryInput): (op: StoryOperationInput) => string | undefined {
  return (op) => {
    const named = field(op.job, 'route');
    if (named) return named;
    const recipient = op.record?.recipient;
    const messageKey = op.record?.messageKey ?? input.message?.messageKey;
    if (!recipient || !messageKey) return undefined;
    for (const route of input.routes ?? []) {
      let action;
      try {
        action = parseAction(route.action);
      } catch {
        continue;
      }
      if (operationKeyOf({ messageKey, action, recipient, channel: route.channel }) === op.operationKey) return route.name;
    }
    return undefined;
  };
}

/** The decision's trace from a deliver job still kept (records of a decision that kept no `trace` of its own). */
function traceIdOf(operations: StoryOperationInput[]): string | undefined {
  for (const op of operations) {
    const parsed = parseTraceparent(field(op.job, 'trace'));
    if (parsed) return parsed.traceId;
  }
  return undefined;
}

function summary(op: StoryOperationInput, route: string | undefined): StoryOperation {
  const r = op.record;
  return {
    operationKey: op.operationKey,
    status: r?.status ?? 'unclaimed',
    recipient: r?.recipient ?? field(op.job, 'recipient') ?? '',
    channel: r?.channel ?? field(op.job, 'channel') ?? '',
    route: route ?? '',
    provider: r?.provider ?? '',
    externalId: r?.externalId ?? '',
    fence: r?.fence ?? '',
    attempts: r?.attempts ?? 0,
    replays: r?.replays ?? 0,
  };
}

function field(job: unknown, name: string): string | undefined {
  const value = job !== null && typeof job === 'object' ? (job as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}
