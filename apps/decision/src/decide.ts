import {
  documentKey,
  normalizeRecipient,
  tenantField,
  operationKey,
  recipientProblem,
  type RecipientKind,
  parseAction,
  formatAction,
  type ActionRef,
  type DecideJobData,
  type DeliverJobData,
  type DocumentRef,
  type IngestInput,
  type RenderJobData,
} from '@singleshot/core';
import type { MailboxConfig, RouteConfig } from '@singleshot/config';
import type { Logger, Metrics } from '@singleshot/observability';
import { inlineRouteTemplates, type RouteTemplates } from '@singleshot/runtime';
import { INVALID_RECIPIENT, deadOnArrival, type DeadOnArrivalDeps } from './invalid-recipient';
import { tombstoneCovers, type MessageDigest, type Tombstone } from '@singleshot/store';
import { joinDigests, type DigestDeps } from './digest-flush';
import { isDigestRoute, planDigestJoins } from './digest-plan';
import { joinCancellationKey, keepFor, settle, type LifecycleDeps } from './lifecycle';
import { recipientsOf, templateContext } from './context';
import { routeMatches } from './route-match';
import { dueAt, quietHoursOf } from './timing';

function withQuietHours(route: RouteConfig, input: IngestInput, recipient: string): Pick<DeliverJobData, 'quietHours'> {
  const quietHours = quietHoursOf(route, input, recipient);
  return quietHours ? { quietHours } : {};
}

/** What the decide handler needs; tests pass small object literals. */
export interface DecideDeps {
  routes: RouteConfig[];
  mailboxes: Pick<MailboxConfig, 'id' | 'owner'>[];
  /** Compiled route templates (default: the routes' inline templates). */
  templates?: RouteTemplates;
  /** Adds the deliver jobs (idempotent by operation key). */
  enqueueDeliveries(jobs: DeliverJobData[]): Promise<void>;
  /** Adds the render jobs of the documents the operations need (idempotent by document key). */
  enqueueRenders?(jobs: RenderJobData[]): Promise<void>;
  /**
   * Records the decision, before any operation is enqueued: `first` is false
   * when the message was decided before; `cancelled` is the tombstone of a
   * cancel that came first (MessageStore.recordDecision). `digests` are the
   * digest groups the message joins next, for a later cancel to find.
   */
  recordDecision(
    messageKey: string,
    operations: Array<{ operationKey: string; target: string }>,
    extraRetentionMs?: number,
    digests?: MessageDigest[],
  ): Promise<{ first: boolean; cancelled?: Tombstone; cancelledBy?: { by: string; reason: string } }>;
  /** Cancels and schedules (send-at, a route's delay); without them every operation goes now. */
  lifecycle?: LifecycleDeps;
  logger: Logger;
  metrics: Pick<Metrics, 'duplicatesSuppressed' | 'unrouted' | 'dead'>;
  /** How each channel's recipients are checked; default `text`. */
  recipientKind?(channel: string): RecipientKind;
  /** Ends operations with an invalid recipient as dead (no deliver job). */
  deadOnArrival?: DeadOnArrivalDeps;
  /** Digest joins and flushes; needed once a route has `digest`. */
  digests?: DigestDeps;
}

export interface DecideOutcome {
  operations: number;
  /** Operations ended `dead` (`invalid_recipient`) at fan-out, never handed to delivery. */
  invalidRecipients?: number;
  /** The message was decided before (a redelivered decide job). */
  redelivered: boolean;
  /** Operations born cancelled (a cancel came before the decision). */
  cancelled?: number;
  /** Operations created `scheduled` (send-at, a route's delay). */
  scheduled?: number;
  /** Digests the message joined for the first time (digest routes). */
  digestItems?: number;
  /** Why no operation was made, when none was. */
  unrouted?: 'no_route' | 'no_recipients';
}

/** What a route contributes to every operation it makes, worked out once per route object. */
interface RoutePlan {
  action: ActionRef;
  /** `formatAction(action)`, the `action` field of every deliver job. */
  actionText: string;
}

// Routes come from the config and live as long as the process: their parsed
// action is computed once, not per message and recipient.
const routePlans = new WeakMap<RouteConfig, RoutePlan>();
function planOf(route: RouteConfig): RoutePlan {
  let plan = routePlans.get(route);
  if (!plan) {
    const action = parseAction(route.action);
    plan = { action, actionText: formatAction(action) };
    routePlans.set(route, plan);
  }
  return plan;
}

/** Pure part of the decision: which operations a message makes. */
export function planOperations(
  data: DecideJobData,
  routes: RouteConfig[],
  mailboxes: Pick<MailboxConfig, 'id' | 'owner'>[],
  recipientKind: (channel: string) => RecipientKind = () => 'text',
  templates: RouteTemplates = inlineRouteTemplates(routes),
): {
  jobs: DeliverJobData[];
  renders: RenderJobData[];
  invalid?: Array<{ job: DeliverJobData; problem: string }>;
  unrouted?: DecideOutcome['unrouted'];
} {
  const { input, messageKey } = data;
  const owner = input.kind === 'mail' ? mailboxes.find((m) => m.id === input.mailboxId)?.owner : undefined;
  const matching = routes.filter((route) => routeMatches(route.match, input));
  if (matching.length === 0) return { jobs: [], renders: [], unrouted: 'no_route' };
  const context = templateContext(input, owner);
  const jobs = new Map<string, DeliverJobData>();
  const renders = new Map<string, RenderJobData>();
  for (const route of matching) {
    const { action, actionText } = planOf(route);
    const documents: DocumentRef[] = route.documents.map((doc) => ({
      name: doc.name,
      documentKey: documentKey({ messageKey, name: doc.name, version: doc.version }),
    }));
    const due = dueAt(route, input, data.firstArrivalAt);
    for (const raw of recipientsOf(route, input, owner)) {
      const recipient = normalizeRecipient(raw);
      if (!recipient) continue;
      const key = operationKey({ messageKey, action, recipient, channel: route.channel });
      // Overlapping routes with the same action, recipient and channel are one operation.
      if (jobs.has(key)) continue;
      const rendered = templates.message(route.name, { ...context, recipient });
      jobs.set(key, {
        operationKey: key,
        messageKey,
        ...tenantField(input.tenant),
        route: route.name,
        action: actionText,
        recipient,
        channel: route.channel,
        subject: rendered.subject,
        text: rendered.text,
        ...(rendered.html !== undefined ? { html: rendered.html } : {}),
        ...(documents.length > 0 ? { documents } : {}),
        data: input.kind === 'event' ? input.data : { mailbox: input.mailboxId, from: input.from },
        firstArrivalAt: data.firstArrivalAt,
        ...(due !== undefined ? { dueAt: due } : {}),
        ...withQuietHours(route, input, recipient),
        ...(route.category !== undefined ? { category: route.category } : {}),
        ...(route.required ? { required: true } : {}),
        ...(route.priority === 'bulk' ? { priority: 'bulk' as const } : {}),
      });
      // One render per document, however many recipients need it (dependents are added below).
      route.documents.forEach((doc, i) => {
        const ref = documents[i] as DocumentRef;
        if (renders.has(ref.documentKey)) return;
        renders.set(ref.documentKey, {
          documentKey: ref.documentKey,
          messageKey,
          route: route.name,
          name: doc.name,
          version: doc.version,
          format: doc.format,
          context,
          createdAt: data.firstArrivalAt,
          dependents: [],
        });
      });
    }
  }
  if (jobs.size === 0) return { jobs: [], renders: [], unrouted: 'no_recipients' };
  const valid: DeliverJobData[] = [];
  const invalid: Array<{ job: DeliverJobData; problem: string }> = [];
  for (const job of jobs.values()) {
    const problem = recipientProblem(recipientKind(job.channel), job.recipient);
    if (problem) invalid.push({ job, problem });
    else valid.push(job);
  }
  // Only operations that will be delivered wait for a document (and wake on it).
  const needed = new Map<string, RenderJobData>();
  for (const job of valid) {
    for (const ref of job.documents ?? []) {
      const render = renders.get(ref.documentKey);
      if (!render) continue;
      const entry = needed.get(ref.documentKey) ?? { ...render, dependents: [] };
      entry.dependents.push(job.operationKey);
      needed.set(ref.documentKey, entry);
    }
  }
  const planned = { jobs: valid, renders: [...needed.values()] };
  return invalid.length > 0 ? { ...planned, invalid } : planned;
}

/**
 * The decide handler: the decision (its operation keys) is recorded, then
 * every deliver job is enqueued before the job completes (ack after effect).
 * A redelivered decide job recomputes the same operation keys, so
 * re-enqueueing cannot double-send.
 */
// The routes without a digest, per config routes list: a digest route makes joins, not operations.
const plainRoutesOf = new WeakMap<RouteConfig[], RouteConfig[]>();
function plainRoutes(routes: RouteConfig[]): RouteConfig[] {
  let plain = plainRoutesOf.get(routes);
  if (!plain) {
    plain = routes.filter((r) => !isDigestRoute(r));
    plainRoutesOf.set(routes, plain);
  }
  return plain;
}

export async function decide(data: DecideJobData, deps: DecideDeps): Promise<DecideOutcome> {
  const joins = planDigestJoins(data, deps.routes, deps.mailboxes);
  const planned0 = planOperations(data, plainRoutes(deps.routes), deps.mailboxes, deps.recipientKind, deps.templates);
  const { jobs, renders, invalid = [] } = planned0;
  const unrouted = joins.length > 0 ? undefined : planned0.unrouted;
  // The decision is recorded before anything is enqueued: a cancel finds every
  // operation that can be claimed, or its tombstone is read here first
  // (message-decided.lua). A retry after a failure below enqueues the same
  // operations again (idempotent by key).
  await joinCancellationKey(data, deps.lifecycle);
  const planned = [...jobs, ...invalid.map((i) => i.job)];
  const { first, cancelled, cancelledBy } = await deps.recordDecision(
    data.messageKey,
    planned.map((j) => ({ operationKey: j.operationKey, target: `${j.channel}:${j.recipient}` })),
    keepFor(data, deps.lifecycle, jobs),
    // Nothing built for a message without digests (every plain notification passes here).
    joins.length > 0 ? joins.map((j) => ({ group: j.group, route: j.route.name, recipient: j.recipient, key: j.key, channel: j.route.channel })) : undefined,
  );
  const settled = await settle(data, jobs, cancelled, deps.lifecycle, cancelledBy);
  // Renders first: a delivery that finds no document state waits for a render
  // that is already queued, never for one that a crash here would lose.
  if (renders.length > 0) {
    if (!deps.enqueueRenders) throw new Error('routes declare documents but no render queue is wired');
    await deps.enqueueRenders(renders);
  }
  await deps.enqueueDeliveries(settled.now);
  let digestItems = 0;
  if (joins.length > 0) {
    if (!deps.digests) throw new Error('routes declare digests but no digest deps are wired');
    // A cancel that came before the decision keeps the message out of its digests.
    const live = cancelled ? joins.filter((j) => !tombstoneCovers(cancelled, j.recipient)) : joins;
    digestItems = await joinDigests(live, data.messageKey, deps.digests);
  }
  if (settled.later.length > 0) await deps.lifecycle?.enqueueLater(settled.later);
  for (const { job, problem } of invalid) {
    if (!deps.deadOnArrival) throw new Error('decide: an invalid recipient needs deadOnArrival deps');
    await deadOnArrival(job, problem, deps.deadOnArrival);
  }
  if (first) {
    for (const { job, problem } of invalid) {
      deps.metrics.dead.inc({ channel: job.channel, reason: INVALID_RECIPIENT });
      deps.logger.warn({ event: 'invalid_recipient', operationKey: job.operationKey, messageKey: job.messageKey, channel: job.channel, problem }, 'recipient refused at fan-out: dead');
    }
  }
  if (!first) deps.metrics.duplicatesSuppressed.inc({ stage: 'decision', reason: 'redelivered' });
  if (unrouted && first) {
    deps.metrics.unrouted.inc({ reason: unrouted });
    deps.logger.warn({ event: 'message_unrouted', messageKey: data.messageKey, reason: unrouted, source: data.input.source }, 'message made no operation');
  }
  return {
    operations: jobs.length,
    redelivered: !first,
    ...(invalid.length ? { invalidRecipients: invalid.length } : {}),
    ...(settled.cancelled ? { cancelled: settled.cancelled } : {}),
    ...(settled.later.length ? { scheduled: settled.later.length } : {}),
    ...(digestItems ? { digestItems } : {}),
    ...(unrouted ? { unrouted } : {}),
  };
}
