import { sha256Hex, type DeliverJobData } from '@singleshot/core';

/** A 64-hex key from any text (tests need valid operation and message keys). */
export const hexKey = (s: string): string => sha256Hex(s);

/**
 * A rendered deliver job for delivery tests, keyed by `name` alone, so two
 * calls with the same name are the same operation. The one builder of deliver
 * jobs for every test.
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
