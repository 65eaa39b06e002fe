import { describe, expect, it } from 'vitest';
import type { EventInput, MailInput } from '@singleshot/core';
import { routeMatchSchema } from '@singleshot/config';
import { bareAddress, globToRegExp, routeMatches } from './route-match';

const event: EventInput = { kind: 'event', source: 'shop', eventId: 'e1', type: 'order.created', data: {} };
const mail: MailInput = {
  kind: 'mail',
  source: 'mail',
  mailboxId: 'support',
  messageId: 'm1@example.com',
  identity: 'message-id',
  from: 'Alice Example <Alice@Example.COM>',
  to: 'support@example.test',
  subject: 'Invoice 42 overdue',
  date: 'Tue, 14 Nov 2023 22:13:20 +0000',
  excerpt: '',
  headers: { 'x-priority': '1 (Highest)', 'list-id': '<ops.example.com>' },
  sizeBytes: 100,
};
// Parse through the config schema so header names are lower-cased as in production.
const m = (match: unknown) => routeMatchSchema.parse(match);

describe('globToRegExp / bareAddress', () => {
  it('`*` is any run, `?` one character, everything else literal, case-insensitive', () => {
    expect(globToRegExp('*@example.com').test('A@EXAMPLE.COM')).toBe(true);
    expect(globToRegExp('*@example.com').test('a@exampleXcom')).toBe(false);
    expect(globToRegExp('*@example.com').test('a@example.com.evil.test')).toBe(false);
    expect(globToRegExp('bo?@x.test').test('bob@x.test')).toBe(true);
    expect(globToRegExp('bo?@x.test').test('bo@x.test')).toBe(false);
    expect(globToRegExp('a+b@(x).test').test('a+b@(x).test')).toBe(true);
  });

  it('bareAddress takes the bracketed address, lower-cased', () => {
    expect(bareAddress('Alice <Alice@Example.COM>')).toBe('alice@example.com');
    expect(bareAddress(' Bob@X.test ')).toBe('bob@x.test');
  });
});

describe('routeMatches', () => {
  it('an empty match matches events and mail', () => {
    expect(routeMatches(m({}), event)).toBe(true);
    expect(routeMatches(m({}), mail)).toBe(true);
  });

  it('source and type are exact; mail has type "mail"', () => {
    expect(routeMatches(m({ source: 'shop', type: 'order.created' }), event)).toBe(true);
    expect(routeMatches(m({ source: 'shop', type: 'order.paid' }), event)).toBe(false);
    expect(routeMatches(m({ source: 'Shop' }), event)).toBe(false);
    expect(routeMatches(m({ source: 'mail', type: 'mail' }), mail)).toBe(true);
    expect(routeMatches(m({ source: 'shop' }), mail)).toBe(false);
  });

  it('mail-only criteria never match an API event', () => {
    expect(routeMatches(m({ mailbox: 'support' }), event)).toBe(false);
    expect(routeMatches(m({ sender: '*' }), event)).toBe(false);
    expect(routeMatches(m({ subject: '.*' }), event)).toBe(false);
    expect(routeMatches(m({ headers: { 'x-priority': '.*' } }), event)).toBe(false);
  });

  it('mailbox is exact', () => {
    expect(routeMatches(m({ mailbox: 'support' }), mail)).toBe(true);
    expect(routeMatches(m({ mailbox: 'sales' }), mail)).toBe(false);
  });

  it('sender is a case-insensitive glob on the bare address', () => {
    expect(routeMatches(m({ sender: '*@example.com' }), mail)).toBe(true);
    expect(routeMatches(m({ sender: 'ALICE@example.com' }), mail)).toBe(true);
    expect(routeMatches(m({ sender: '*@other.com' }), mail)).toBe(false);
    // The display name is not the address.
    expect(routeMatches(m({ sender: 'alice example*' }), mail)).toBe(false);
  });

  it('subject is a regular expression', () => {
    expect(routeMatches(m({ subject: '^Invoice \\d+' }), mail)).toBe(true);
    expect(routeMatches(m({ subject: '^invoice' }), mail)).toBe(false);
    expect(routeMatches(m({ subject: '^refund|overdue$' }), mail)).toBe(true);
  });

  it('headers: every named header must exist and match; names are case-insensitive', () => {
    expect(routeMatches(m({ headers: { 'X-Priority': '^1\\b' } }), mail)).toBe(true);
    expect(routeMatches(m({ headers: { 'x-priority': '^1', 'list-id': 'ops\\.example' } }), mail)).toBe(true);
    expect(routeMatches(m({ headers: { 'x-priority': '^1', 'list-id': 'sales' } }), mail)).toBe(false);
    expect(routeMatches(m({ headers: { 'x-missing': '.*' } }), mail)).toBe(false);
  });

  it('all given fields must match (AND)', () => {
    expect(routeMatches(m({ source: 'mail', mailbox: 'support', sender: '*@example.com', subject: 'Invoice' }), mail)).toBe(true);
    expect(routeMatches(m({ source: 'mail', mailbox: 'support', sender: '*@example.com', subject: 'Refund' }), mail)).toBe(false);
  });
});
