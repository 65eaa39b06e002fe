import {
  normalizeRecipient,
  operationKey,
  parseAction,
  renderTemplate,
  formatAction,
  type DecideJobData,
  type DeliverJobData,
  type IngestInput,
} from '@singleshot/core';
import type { MailboxConfig, RouteConfig } from '@singleshot/config';
import type { Logger, Metrics } from '@singleshot/observability';
import { routeMatches } from './route-match';

/** What the decide handler needs; tests pass small object literals. */
export interface DecideDeps {
  routes: RouteConfig[];
  mailboxes: Pick<MailboxConfig, 'id' | 'owner'>[];
  /** Adds the deliver jobs (idempotent by operation key). */
  enqueueDeliveries(jobs: DeliverJobData[]): Promise<void>;
  /** Records the decision; false when the message was decided before. */
  markDecided(messageKey: string, operationKeys: string[]): Promise<boolean>;
  logger: Logger;
  metrics: Pick<Metrics, 'duplicatesSuppressed' | 'unrouted' | 'recipientsRejected'>;
  /** Why a recipient cannot be sent on a channel (an SMS channel needs E.164), or undefined; none: every recipient is fine. */
  recipientProblem?: RecipientCheck;
}

/** See `recipientProblem` in @singleshot/providers. */
export type RecipientCheck = (channel: string, recipient: string) => string | undefined;

/** A recipient that made no operation because no provider of its channel can address it. */
export interface RejectedRecipient {
  route: string;
  channel: string;
  recipient: string;
  reason: string;
}

export interface DecideOutcome {
  operations: number;
  /** The message was decided before (a redelivered decide job). */
  redelivered: boolean;
  /** Why no operation was made, when none was. */
  unrouted?: 'no_route' | 'no_recipients';
}

function templateContext(input: IngestInput, owner: string | undefined): Record<string, unknown> {
  if (input.kind === 'event') {
    return { source: input.source, type: input.type, id: input.eventId, data: input.data, recipients: input.recipients ?? [] };
  }
  return {
    source: 'mail',
    owner,
    mail: {
      from: input.from,
      to: input.to,
      subject: input.subject,
      date: input.date,
      excerpt: input.excerpt,
      mailbox: input.mailboxId,
      identity: input.identity,
      note: input.note,
    },
  };
}

function recipientsOf(route: RouteConfig, input: IngestInput, owner: string | undefined): string[] {
  if (route.recipients === 'event') return input.kind === 'event' ? (input.recipients ?? []) : [];
  if (route.recipients === 'owner') return owner ? [owner] : [];
  return route.recipients;
}

/** Pure part of the decision: which operations a message makes. */
export function planOperations(
  data: DecideJobData,
  routes: RouteConfig[],
  mailboxes: Pick<MailboxConfig, 'id' | 'owner'>[],
  recipientProblem?: RecipientCheck,
): { jobs: DeliverJobData[]; unrouted?: DecideOutcome['unrouted']; rejected?: RejectedRecipient[] } {
  const { input, messageKey } = data;
  const owner = input.kind === 'mail' ? mailboxes.find((m) => m.id === input.mailboxId)?.owner : undefined;
  const matching = routes.filter((route) => routeMatches(route.match, input));
  if (matching.length === 0) return { jobs: [], unrouted: 'no_route' };
  const rejected: RejectedRecipient[] = [];
  const context = templateContext(input, owner);
  const jobs = new Map<string, DeliverJobData>();
  for (const route of matching) {
    const action = parseAction(route.action);
    for (const raw of recipientsOf(route, input, owner)) {
      const recipient = normalizeRecipient(raw);
      if (!recipient) continue;
      const problem = recipientProblem?.(route.channel, recipient);
      if (problem) {
        rejected.push({ route: route.name, channel: route.channel, recipient, reason: problem });
        continue;
      }
      const key = operationKey({ messageKey, action, recipient, channel: route.channel });
      // Overlapping routes with the same action, recipient and channel are one operation.
      if (jobs.has(key)) continue;
      jobs.set(key, {
        operationKey: key,
        messageKey,
        route: route.name,
        action: formatAction(action),
        recipient,
        channel: route.channel,
        subject: renderTemplate(route.template.subject, { ...context, recipient }),
        text: renderTemplate(route.template.text, { ...context, recipient }),
        data: input.kind === 'event' ? input.data : { mailbox: input.mailboxId, from: input.from },
        firstArrivalAt: data.firstArrivalAt,
      });
    }
  }
  const reported = rejected.length > 0 ? { rejected } : {};
  return jobs.size === 0 ? { jobs: [], unrouted: 'no_recipients', ...reported } : { jobs: [...jobs.values()], ...reported };
}

/**
 * The decide handler: every deliver job is enqueued before the decision is
 * recorded and before the job completes (ack after effect). A redelivered decide
 * job recomputes the same operation keys, so re-enqueueing cannot double-send.
 */
export async function decide(data: DecideJobData, deps: DecideDeps): Promise<DecideOutcome> {
  const { jobs, unrouted, rejected } = planOperations(data, deps.routes, deps.mailboxes, deps.recipientProblem);
  await deps.enqueueDeliveries(jobs);
  const first = await deps.markDecided(data.messageKey, jobs.map((j) => j.operationKey));
  if (!first) deps.metrics.duplicatesSuppressed.inc({ stage: 'decision', reason: 'redelivered' });
  if (first) {
    // Reported once per message (a redelivered decide job recomputes the same rejections).
    for (const r of rejected ?? []) {
      deps.metrics.recipientsRejected.inc({ channel: r.channel });
      deps.logger.warn({ event: 'recipient_rejected', messageKey: data.messageKey, ...r }, 'recipient cannot be sent on its channel: no operation made');
    }
  }
  if (unrouted && first) {
    deps.metrics.unrouted.inc({ reason: unrouted });
    deps.logger.warn({ messageKey: data.messageKey, reason: unrouted, source: data.input.source }, 'message made no operation');
  }
  return { operations: jobs.length, redelivered: !first, ...(unrouted ? { unrouted } : {}) };
}
