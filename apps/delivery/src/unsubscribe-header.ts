import type { DeliverJobData } from '@singleshot/core';
import type { ListUnsubscribe, Provider } from '@singleshot/providers';
import type { DeliverDeps } from './deliver-types';

/** The providers that build email, and so carry `List-Unsubscribe`. */
const EMAIL_TYPES: ReadonlySet<Provider['type']> = new Set(['smtp', 'ses', 'sendgrid']);

/**
 * Whether this send carries a one-click unsubscribe: links are configured,
 * the route has a category, and the channel's chain builds email. A required
 * route (`required: true`) gets none: its recipients cannot opt out of it,
 * and a link that changes nothing would mislead them.
 */
export function needsUnsubscribe(job: DeliverJobData, deps: Pick<DeliverDeps, 'unsubscribe' | 'providers'>): boolean {
  if (!deps.unsubscribe || job.category === undefined || job.required) return false;
  return deps.providers(job.channel).some((p) => EMAIL_TYPES.has(p.type));
}

/** The signed link of this recipient, channel and category. */
export function unsubscribeOf(job: DeliverJobData & { category: string }, deps: Pick<DeliverDeps, 'unsubscribe'>): Promise<ListUnsubscribe> {
  return (deps.unsubscribe as NonNullable<DeliverDeps['unsubscribe']>).link({ recipient: job.recipient, channel: job.channel, category: job.category });
}
