import { sha256Hex as sha } from '@singleshot/core';
import { describe, expect, it } from 'vitest';
import type { DecideJobData, EventInput, MailInput } from '@singleshot/core';
import { routeSchema, type RouteConfig } from '@singleshot/config';
import { planOperations } from './decide';

// Routes go through the config schema, so defaults (recipients, template) are the real ones.
const route = (r: Record<string, unknown>): RouteConfig => routeSchema.parse({ channel: 'webhook', action: 'notify', ...r });

const mailboxes = [{ id: 'support', owner: 'Owner@Example.test' }];

function eventJob(patch: Partial<EventInput> = {}): DecideJobData {
  const input: EventInput = {
    kind: 'event',
    source: 'shop',
    eventId: 'evt-1',
    type: 'order.created',
    recipients: ['a@example.com', 'b@example.com'],
    data: { orderId: 'o-9', total: 12.5 },
    ...patch,
  };
  return { messageKey: sha(`shop:${input.eventId}`), firstArrivalAt: 1_700_000_000_000, via: 'api', input };
}

function mailJob(patch: Partial<MailInput> = {}): DecideJobData {
  const input: MailInput = {
    kind: 'mail',
    source: 'mail',
    mailboxId: 'support',
    messageId: 'm1@example.com',
    identity: 'message-id',
    from: 'Alice <alice@example.com>',
    to: 'support@example.test',
    subject: 'Printer on fire',
    date: 'Tue, 14 Nov 2023 22:13:20 +0000',
    excerpt: 'It is really on fire.',
    headers: { 'x-priority': '1' },
    sizeBytes: 321,
    ...patch,
  };
  return { messageKey: sha(`${input.mailboxId}:m1@example.com`), firstArrivalAt: 1_700_000_000_001, via: 'imap', input };
}

describe('planOperations', () => {
  it('makes one operation per event recipient with the docs/protocol.md operation key', () => {
    const data = eventJob();
    const { jobs, unrouted } = planOperations(data, [route({ name: 'orders', match: { source: 'shop' } })], mailboxes);
    expect(unrouted).toBeUndefined();
    expect(jobs.map((j) => j.recipient)).toEqual(['a@example.com', 'b@example.com']);
    for (const job of jobs) {
      expect(job).toMatchObject({
        operationKey: sha(`${data.messageKey}:notify:${job.recipient}:webhook:v1`),
        messageKey: data.messageKey,
        route: 'orders',
        action: 'notify:v1',
        channel: 'webhook',
        data: { orderId: 'o-9', total: 12.5 },
        firstArrivalAt: data.firstArrivalAt,
      });
    }
  });

  it('fans out across every matching route (not first-match)', () => {
    const routes = [
      route({ name: 'hook', match: { source: 'shop' }, channel: 'webhook' }),
      route({ name: 'mail', match: { type: 'order.created' }, channel: 'email' }),
      route({ name: 'other', match: { source: 'billing' }, channel: 'sms' }),
    ];
    const { jobs } = planOperations(eventJob(), routes, mailboxes);
    expect(jobs.map((j) => `${j.route}/${j.channel}/${j.recipient}`).sort()).toEqual([
      'hook/webhook/a@example.com',
      'hook/webhook/b@example.com',
      'mail/email/a@example.com',
      'mail/email/b@example.com',
    ]);
    expect(new Set(jobs.map((j) => j.operationKey)).size).toBe(4);
  });

  it('collapses overlapping routes with the same action, recipient and channel into one operation', () => {
    const routes = [
      route({ name: 'first', match: { source: 'shop' } }),
      route({ name: 'second', match: { type: 'order.created' } }),
      route({ name: 'third', match: {}, recipients: ['A@Example.com'] }),
    ];
    const { jobs } = planOperations(eventJob(), routes, mailboxes);
    expect(jobs).toHaveLength(2);
    expect(jobs.map((j) => [j.route, j.recipient])).toEqual([
      ['first', 'a@example.com'],
      ['first', 'b@example.com'],
    ]);
  });

  it('keeps routes apart when the action or its version differs', () => {
    const routes = [
      route({ name: 'v1', match: {}, action: 'notify' }),
      route({ name: 'v2', match: {}, action: 'notify:v2' }),
      route({ name: 'audit', match: {}, action: 'audit' }),
    ];
    const { jobs } = planOperations(eventJob({ recipients: ['a@example.com'] }), routes, mailboxes);
    expect(jobs.map((j) => j.action)).toEqual(['notify:v1', 'notify:v2', 'audit:v1']);
    expect(new Set(jobs.map((j) => j.operationKey)).size).toBe(3);
  });

  it('collapses event recipients that differ only by address case or spaces', () => {
    const { jobs } = planOperations(eventJob({ recipients: ['a@example.com', ' A@EXAMPLE.com ', 'user-7', 'User-7'] }), [route({ name: 'r' })], mailboxes);
    expect(jobs.map((j) => j.recipient)).toEqual(['a@example.com', 'user-7', 'User-7']);
  });

  it('recipients: a fixed list', () => {
    const { jobs } = planOperations(eventJob(), [route({ name: 'ops', recipients: ['ops@example.test', 'oncall'] })], mailboxes);
    expect(jobs.map((j) => j.recipient)).toEqual(['ops@example.test', 'oncall']);
  });

  it('recipients: owner is the mailbox owner, lower-cased', () => {
    const { jobs } = planOperations(mailJob(), [route({ name: 'support', match: { mailbox: 'support' }, action: 'notify_owner', channel: 'email' })], mailboxes);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ recipient: 'owner@example.test', action: 'notify_owner:v1', channel: 'email' });
    expect(jobs[0]?.data).toEqual({ mailbox: 'support', from: 'Alice <alice@example.com>' });
  });

  it('mail-only criteria never match an event', () => {
    for (const match of [{ mailbox: 'support' }, { sender: '*' }, { subject: '.' }, { headers: { 'x-priority': '.' } }]) {
      expect(planOperations(eventJob(), [route({ name: 'r', match })], mailboxes), JSON.stringify(match)).toEqual({ jobs: [], renders: [], unrouted: 'no_route' });
    }
  });

  it('matches mail on a case-insensitive sender glob', () => {
    const r = route({ name: 'vip', match: { sender: '*@EXAMPLE.com' }, recipients: 'owner' });
    expect(planOperations(mailJob({ from: 'ALICE <Alice@Example.COM>' }), [r], mailboxes).jobs).toHaveLength(1);
    expect(planOperations(mailJob({ from: 'mallory@example.com.evil.test' }), [r], mailboxes).unrouted).toBe('no_route');
  });

  it('matches mail on subject and header regexes', () => {
    const bySubject = route({ name: 's', match: { subject: 'on fire$' }, recipients: 'owner' });
    const byHeader = route({ name: 'h', match: { headers: { 'X-Priority': '^1$' } }, recipients: 'owner', channel: 'sms' });
    expect(planOperations(mailJob(), [bySubject, byHeader], mailboxes).jobs.map((j) => j.route)).toEqual(['s', 'h']);
    expect(planOperations(mailJob({ subject: 'fire drill', headers: { 'x-priority': '3' } }), [bySubject, byHeader], mailboxes).unrouted).toBe('no_route');
  });

  it('renders templates with the event context and the recipient', () => {
    const r = route({
      name: 'orders',
      template: { subject: 'Order {{data.orderId}} ({{type}} from {{source}})', text: 'Hi {{recipient}}: {{id}} {{json data}} {{data.missing}}|' },
      recipients: ['a@example.com'],
    });
    const [job] = planOperations(eventJob(), [r], mailboxes).jobs;
    expect(job?.subject).toBe('Order o-9 (order.created from shop)');
    expect(job?.text).toBe('Hi a@example.com: evt-1 {"orderId":"o-9","total":12.5} |');
  });

  it('renders templates with the mail context and the owner', () => {
    const r = route({
      name: 'support',
      action: 'notify_owner',
      template: { subject: 'New mail: {{mail.subject}}', text: '{{owner}} <- {{mail.from}} in {{mail.mailbox}}: {{mail.excerpt}}{{data.orderId}}' },
    });
    const [job] = planOperations(mailJob(), [r], mailboxes).jobs;
    expect(job?.subject).toBe('New mail: Printer on fire');
    expect(job?.text).toBe('Owner@Example.test <- Alice <alice@example.com> in support: It is really on fire.');
  });

  it('no matching route → unrouted no_route', () => {
    expect(planOperations(eventJob(), [route({ name: 'r', match: { source: 'billing' } })], mailboxes)).toEqual({ jobs: [], renders: [], unrouted: 'no_route' });
    expect(planOperations(eventJob(), [], mailboxes)).toEqual({ jobs: [], renders: [], unrouted: 'no_route' });
  });

  it('matching routes without recipients → unrouted no_recipients', () => {
    expect(planOperations(eventJob({ recipients: undefined }), [route({ name: 'r' })], mailboxes)).toEqual({ jobs: [], renders: [], unrouted: 'no_recipients' });
    expect(planOperations(eventJob({ recipients: ['  '] }), [route({ name: 'r' })], mailboxes)).toEqual({ jobs: [], renders: [], unrouted: 'no_recipients' });
    // "event" recipients on a mail, and "owner" of a mailbox no longer configured.
    expect(planOperations(mailJob(), [route({ name: 'r', recipients: 'event' })], mailboxes).unrouted).toBe('no_recipients');
    expect(planOperations(mailJob({ mailboxId: 'gone' }), [route({ name: 'r', recipients: 'owner' })], mailboxes).unrouted).toBe('no_recipients');
  });

  it('is deterministic: the same message plans the same operation keys', () => {
    const routes = [route({ name: 'a' }), route({ name: 'b', channel: 'email' })];
    const first = planOperations(eventJob(), routes, mailboxes).jobs.map((j) => j.operationKey);
    const again = planOperations(eventJob(), routes, mailboxes).jobs.map((j) => j.operationKey);
    expect(again).toEqual(first);
  });
});
