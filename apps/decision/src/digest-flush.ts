import { digestId, digestWindowAt, formatAction, operationKey, parseAction, SingleshotError, type DeliverJobData } from '@singleshot/core';
import type { DigestConfig, RouteConfig } from '@singleshot/config';
import type { DigestCloseJobData } from '@singleshot/queues';
import type { RouteTemplates } from '@singleshot/runtime';
import type { ClosedDigest, DigestCloseReason, DigestRecord, DigestRecords, DigestStore } from '@singleshot/store';
import type { DigestJoinPlan } from './digest-plan';

/** What joining and flushing digests needs; the decision app wires it (worker.ts). */
export interface DigestDeps {
  digests: Pick<DigestStore, 'join' | 'close' | 'flushed'>;
  /** Where a closed digest's record goes (members, flush operation) before its flush is enqueued. */
  records: Pick<DigestRecords, 'write'>;
  routes: RouteConfig[];
  templates: RouteTemplates;
  /** Adds a digest's close job (jobId = digest id) to run after `delayMs`. */
  enqueueClose(data: DigestCloseJobData, jobId: string, delayMs: number): Promise<void>;
  /** Enqueues a flush operation now (the normal deliver path). */
  enqueueNow(job: DeliverJobData): Promise<void>;
  /** Creates a flush operation `scheduled` until `dueAt` and enqueues it delayed (a member's send-at or delay). */
  enqueueLater(job: DeliverJobData, dueAt: number): Promise<void>;
  onItem?(route: string): void;
  onFlushed?(reason: DigestCloseReason): void;
  now?: () => number;
}

/** A flush whose route is no longer in the config: its close job fails (kept, retried) rather than send something else. */
export class DigestRouteMissingError extends SingleshotError {
  constructor(route: string) {
    super(`digest route ${route} is not in the config`, 'DIGEST_ROUTE_MISSING');
  }
}

/** A digest item as the flush reads it (digestItem in digest-plan.ts writes it). */
export interface DigestItem {
  messageKey: string;
  dueAt?: number;
  [k: string]: unknown;
}

/** The flush operation of a closed digest: one deliver job with its ordered items (deterministic: same digest, same job). */
export function flushJob(close: DigestCloseJobData, route: RouteConfig & { digest: DigestConfig }, digest: ClosedDigest, templates: RouteTemplates, parsed?: readonly DigestItem[]): { job: DeliverJobData; dueAt?: number } {
  const id = digestId(close.group, close.seq);
  const action = parseAction(route.action);
  const items = parsed ?? digest.items.map((raw) => JSON.parse(raw) as DigestItem);
  let due = 0;
  for (const item of items) if (typeof item.dueAt === 'number' && item.dueAt > due) due = item.dueAt;
  const info = { id, group: close.group, seq: close.seq, key: close.key, reason: digest.reason, openedAt: digest.openedAt, closeAt: digest.closeAt, closedAt: digest.closedAt, count: items.length };
  const rendered = templates.message(route.name, { items, count: items.length, digest: info, recipient: close.recipient });
  const quiet = route.quietHours && !route.required ? { start: route.quietHours.start, end: route.quietHours.end, timezone: route.quietHours.timezone === 'recipient' ? route.quietHours.fallbackTimezone : route.quietHours.timezone } : undefined;
  const job: DeliverJobData = {
    operationKey: operationKey({ messageKey: id, action, recipient: close.recipient, channel: route.channel }),
    messageKey: id,
    route: route.name,
    action: formatAction(action),
    recipient: close.recipient,
    channel: route.channel,
    subject: rendered.subject,
    text: rendered.text,
    ...(rendered.html !== undefined ? { html: rendered.html } : {}),
    data: { digest: info, items, count: items.length },
    firstArrivalAt: Math.max(1, digest.openedAt),
    ...(due > 0 ? { dueAt: due } : {}),
    ...(quiet ? { quietHours: quiet } : {}),
    ...(route.category !== undefined ? { category: route.category } : {}),
    ...(route.required ? { required: true } : {}),
    ...(route.priority === 'bulk' ? { priority: 'bulk' as const } : {}),
  };
  return due > 0 ? { job, dueAt: due } : { job };
}

/**
 * Closes a digest (or reads it again when it was closed before) and enqueues
 * its flush operation, then drops its items. Every step is idempotent, so a
 * crash anywhere is repaired by running it again: the close job's retry, or
 * the retried decision of a member.
 */
export async function closeAndFlush(close: DigestCloseJobData, deps: DigestDeps): Promise<{ state: 'flushed' | 'empty' | 'unknown' } | { state: 'early'; closeAt: number }> {
  const now = (deps.now ?? Date.now)();
  const found = await deps.digests.close(close.group, close.seq, now);
  if (found.state !== 'closed') return found;
  const { digest } = found;
  const items = digest.items.map((raw) => JSON.parse(raw) as DigestItem);
  const record: DigestRecord = {
    id: digestId(close.group, close.seq),
    group: close.group,
    seq: close.seq,
    route: close.route,
    recipient: close.recipient,
    key: close.key,
    reason: digest.reason,
    openedAt: digest.openedAt,
    closeAt: digest.closeAt,
    closedAt: digest.closedAt,
    members: items.map((item) => item.messageKey),
    state: 'empty',
    operationKey: '',
  };
  // Every member was cancelled out: no message to send, and none is.
  if (items.length === 0) {
    await deps.records.write(record);
    await deps.digests.flushed(close.group, close.seq, now);
    return { state: 'empty' };
  }
  const route = deps.routes.find((r) => r.name === close.route);
  if (!route?.digest) throw new DigestRouteMissingError(close.route);
  const { job, dueAt } = flushJob(close, route as RouteConfig & { digest: DigestConfig }, digest, deps.templates, items);
  // The record before the job: a flush operation that exists always has one (`ops show`, a cancel's answer).
  await deps.records.write({ ...record, state: 'flush', operationKey: job.operationKey });
  if (dueAt !== undefined && dueAt > now) await deps.enqueueLater(job, dueAt);
  else await deps.enqueueNow(job);
  if (await deps.digests.flushed(close.group, close.seq, now)) deps.onFlushed?.(digest.reason);
  return { state: 'flushed' };
}

/**
 * Joins a message to each digest it belongs to. A digest this join opened
 * gets its close job; one it closed (maxItems, bytes, a passed close time) is
 * flushed at once. A repeated join (a redelivered decision) adds the close
 * job again or flushes again, which repairs a crash after the join. A join
 * a cancel got to first (status `cancelled`) does nothing.
 */
export async function joinDigests(plans: readonly DigestJoinPlan[], messageKey: string, deps: DigestDeps): Promise<number> {
  let joined = 0;
  await Promise.all(
    plans.map(async (plan) => {
      const now = (deps.now ?? Date.now)();
      const { closeAt } = digestWindowAt(plan.route.digest.window, plan.route.digest.mode, now);
      const r = await deps.digests.join(plan.group, messageKey, plan.item, {
        now,
        closeAt,
        maxItems: plan.route.digest.maxItems,
        maxBytes: plan.route.digest.maxBytes,
        route: plan.route.name,
        recipient: plan.recipient,
        key: plan.key,
      });
      const of = (seq: number): DigestCloseJobData => ({ group: plan.group, seq, route: plan.route.name, recipient: plan.recipient, key: plan.key });
      if (r.status === 'joined') {
        joined++;
        deps.onItem?.(plan.route.name);
      }
      if (r.state === 'open' && r.closeAt !== undefined && (r.opened || r.status === 'duplicate')) await deps.enqueueClose(of(r.seq), digestId(plan.group, r.seq), r.closeAt - now);
      for (const c of r.closed) await closeAndFlush(of(c.seq), deps);
      if (r.status === 'duplicate' && r.state === 'closed') await closeAndFlush(of(r.seq), deps);
    }),
  );
  return joined;
}
