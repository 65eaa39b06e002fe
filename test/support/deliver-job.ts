import { createHash } from 'node:crypto';
import type { DeliverJobData } from '@singleshot/core';

/** A 64-hex key from any text (tests need valid operation and message keys). */
export const hexKey = (s: string): string => createHash('sha256').update(s).digest('hex');

/**
 * A rendered deliver job for end-to-end delivery tests, keyed by `name` alone,
 * so two calls with the same name are the same operation.
 */
export function deliverJob(name: string, overrides: Partial<DeliverJobData> = {}): DeliverJobData {
  return {
    operationKey: hexKey(`op:${name}`),
    messageKey: hexKey(`msg:${name}`),
    route: 'test',
    action: 'notify:v1',
    recipient: `${name}@example.com`,
    channel: 'webhook',
    subject: `subject ${name}`,
    text: `text ${name}`,
    data: { name },
    firstArrivalAt: Date.now(),
    ...overrides,
  };
}
