import { z } from 'zod';
import { positiveInt, tenantId } from './primitives';

/** One tenant's settings (docs/tenants.md); a tenant not listed has the defaults. */
export const tenantSchema = z.strictObject({
  id: tenantId.describe('The tenant (`default` for the events of keys without one).'),
  weight: positiveInt
    .max(1000)
    .default(1)
    .describe('Its share of the senders against the other tenants with work waiting, per deliver partition: weight 3 is sent three jobs for each of a weight-1 tenant\'s. A change applies to the jobs already waiting.'),
  maxInFlight: positiveInt
    .optional()
    .describe('Its operations in flight at most, per deliver partition: moved out of the fair queue and not yet ended (sent, dead, suppressed, cancelled). It is passed over at its cap, and keeps its turn. A worker that dies holds its places until its operations run again, or for twice `delivery.leaseMs` at most. Unset: no cap.'),
  maxPending: positiveInt
    .optional()
    .describe('Its deliver jobs waiting in the fair queues at most: past it, `POST /v1/events` with its key answers `429 TENANT_BACKLOG_FULL` with `Retry-After`, and the producer retries later. Counted when the event arrives (decisions under way are not in it yet). Unset: no bound.'),
});

export const tenancySchema = z
  .strictObject({
    fairShare: z
      .enum(['auto', 'on', 'off'])
      .default('auto')
      .describe('Choose the next deliver job fairly between tenants (docs/tenants.md, "Fair share"). `auto`: on when the config names a tenant (a key, mailbox or source bound to one, or a `tenants` entry) or has a `bulk` route. `off`: first in, first out for all.'),
    window: positiveInt
      .max(100_000)
      .default(128)
      .describe('With fair share: operations moved on to a deliver partition\'s queue and not yet taken by a worker, at most; the rest wait in the fair queue, where a tenant with less sent goes first. Smaller is fairer, larger keeps more work ready for the workers.'),
    tenants: z.array(tenantSchema).default([]).describe('Tenants with settings other than the defaults.'),
  })
  .superRefine((t, ctx) => {
    // The backlog and the caps are kept in the fair queues: without them there is nothing to count.
    if (t.fairShare === 'off') {
      t.tenants.forEach((tenant, i) => {
        for (const field of ['maxPending', 'maxInFlight'] as const) {
          if (tenant[field] !== undefined) ctx.addIssue({ code: 'custom', path: ['tenants', i, field], message: `${field} needs the fair queue: fairShare must not be off` });
        }
      });
    }
    const seen = new Set<string>();
    t.tenants.forEach((tenant, i) => {
      if (seen.has(tenant.id)) ctx.addIssue({ code: 'custom', path: ['tenants', i, 'id'], message: `tenant "${tenant.id}" is listed twice` });
      seen.add(tenant.id);
    });
  });
