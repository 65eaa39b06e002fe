import { z } from 'zod';
import { parseAction } from '@singleshot/core';
import { isValidTimeZone, parseQuietHours } from '@singleshot/core';
import { durationMs, identifier, nonEmpty, rateLimitSchema, regexSource } from './primitives';
import { routeDocumentSchema } from './document-schema';
import { digestSchema } from './digest-schema';

/**
 * What a route matches. Every given field must match (AND); an empty match
 * (`{}`) matches everything.
 * - `source`, `type`, `mailbox`: exact strings (`source` is `mail` for mail).
 * - `sender`: a glob on the sender address, `*` = any run of characters,
 *   compared case-insensitively (`*@example.com`).
 * - `subject`: a regular expression source, tested against the subject.
 * - `headers`: header name → regular expression on that header's value. Names
 *   are lower-cased here, as mail headers are case-insensitive.
 */
export const routeMatchSchema = z.strictObject({
  source: nonEmpty.optional().describe('Exact event source (`mail` for mail).'),
  type: nonEmpty.optional().describe('Exact event type (`mail` for mail).'),
  mailbox: identifier.optional().describe('Exact mailbox id.'),
  sender: nonEmpty.optional().describe('Glob on the sender address, `*` = any run of characters, case-insensitive (`*@example.com`).'),
  subject: regexSource.optional().describe('Regular expression tested against the subject.'),
  headers: z
    .record(z.string().min(1), regexSource)
    .transform((headers) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])))
    .optional()
    .meta({ description: "Header name (case-insensitive) → regular expression on that header's value.", keyName: 'header' }),
});

const actionSpec = z.string().superRefine((spec, ctx) => {
  try {
    parseAction(spec);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

/**
 * Who gets the notification:
 * - `event`: the event's own `recipients` list;
 * - `owner`: the owner of the mailbox the mail arrived in;
 * - a fixed list of addresses or ids.
 */
export const recipientsSchema = z.union([
  z.literal('event'),
  z.literal('owner'),
  z.array(nonEmpty).min(1, 'needs at least one recipient'),
]);

/**
 * Handlebars templates (`{{path}}` as before; helpers `date`, `money`, `list`,
 * `sum`, `multiply`, `json`, `default`). Context keys:
 * - events: `source`, `type`, `id`, `data` (so `{{data.orderId}}`), `recipients`;
 * - mail: `mail.from`, `mail.to`, `mail.subject`, `mail.date`, `mail.excerpt`,
 *   `mail.mailbox`, and `owner` (the mailbox owner's address).
 * A missing value renders as the empty string. `subject` and `text` render
 * values as they are; `html` escapes them. Bodies may live in files (paths
 * relative to the config file, read and compiled once at start): `textFile`,
 * `htmlFile`, or `mjmlFile` (MJML compiled to responsive HTML). Email with an
 * HTML body goes out as multipart text + HTML.
 */
export const templateSchema = z
  .strictObject({
    subject: z.string().default('').describe('Subject template (values as they are).'),
    text: z.string().default('').describe('Text body template (values as they are); or `textFile`.'),
    html: z.string().optional().describe('HTML body template (values escaped; `{{{value}}}` for trusted markup).'),
    textFile: nonEmpty.optional().describe('Text body template in a file (relative to the config file).'),
    htmlFile: nonEmpty.optional().describe('HTML body template in a file.'),
    mjmlFile: nonEmpty.optional().describe('MJML file compiled once at start to responsive HTML, then rendered as the HTML body.'),
  })
  .superRefine((t, ctx) => {
    const html = [t.html !== undefined && 'html', t.htmlFile && 'htmlFile', t.mjmlFile && 'mjmlFile'].filter(Boolean);
    if (html.length > 1) ctx.addIssue({ code: 'custom', message: `give one of html, htmlFile, mjmlFile (got ${html.join(', ')})` });
    if (t.textFile && t.text !== '') ctx.addIssue({ code: 'custom', path: ['textFile'], message: 'give either text or textFile, not both' });
  });

const timeZone = z.string().refine(isValidTimeZone, 'expected an IANA time zone such as Europe/Berlin');

/**
 * Hours in which a route's notifications are not sent: an operation due
 * inside waits for their end (the same operation; docs/scheduling.md).
 * `timezone` is an IANA zone, or `recipient`: the recipient's own zone from
 * the event (`recipients: [{ address, timezone }]`), else `fallbackTimezone`.
 */
export const quietHoursSchema = z
  .strictObject({
    start: z.string().describe('Local start time, `HH:MM` (24 h).'),
    end: z.string().describe('Local end time, `HH:MM`; before `start` for a window across midnight.'),
    timezone: z.union([z.literal('recipient'), timeZone]).describe('An IANA zone, or `recipient` (the recipient\'s zone from the event).'),
    fallbackTimezone: timeZone.default('UTC').describe('With `timezone: recipient`: the zone of a recipient whose event gave none.'),
  })
  .superRefine((q, ctx) => {
    try {
      parseQuietHours({ start: q.start, end: q.end, timezone: q.timezone === 'recipient' ? q.fallbackTimezone : q.timezone });
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

/**
 * One routing rule. Routes are NOT first-match: every route whose `match`
 * matches applies (fan-out), each producing its own operations, one per
 * recipient on the route's channel. Two routes with the same action, recipient
 * and channel collapse into one operation (same operation key), so overlapping
 * routes cannot double-send.
 *
 * `recipients` defaults to `owner` for a `notify_owner` action (docs/contract.md's
 * example relies on it: "the mailbox's owner") and to `event` otherwise.
 */
export const routeSchema = z
  .strictObject({
    name: identifier.describe('Unique route name.'),
    match: routeMatchSchema.prefault({}).describe('Every given field must match; `{}` matches everything.'),
    action: actionSpec.describe('`name` or `name:vN` (default `v1`); bump the version to let changed logic run once more.'),
    channel: identifier.describe('Must name an entry of `providers`.'),
    recipients: recipientsSchema
      .optional()
      .describe("`event`: the event's own `recipients`; `owner`: the mailbox owner; or a fixed list. Default `owner` for a `notify_owner` action, else `event`."),
    template: templateSchema
      .prefault({})
      .describe('Handlebars templates (see templates-and-documents.md). Context: `source`, `type`, `id`, `data.*`, `recipients` for events; `mail.from`, `mail.to`, `mail.subject`, `mail.date`, `mail.excerpt`, `mail.mailbox`, `owner` for mail. Missing values render empty.'),
    limit: rateLimitSchema.optional().describe('Per-route rate limit, per recipient. Over the limit an operation ends `suppressed` (reason `rate_limit`).'),
    documents: z.array(routeDocumentSchema).default([]).describe('Documents every notification of this route needs first; each is generated once.'),
    delay: durationMs
      .optional()
      .describe('Send this long after the event first arrived (`30s`, `15m`, `72h`, `2d`); the operation is `scheduled` meanwhile. An event\'s own `sendAt`/`delaySeconds` wins.'),
    digest: digestSchema
      .optional()
      .describe('Gather this route\'s notifications into one message per recipient, key and window (docs/digests.md); the template gets `items` and `count`.'),
    quietHours: quietHoursSchema.optional().describe('Hours in which this route sends nothing: an operation due inside waits for their end (docs/scheduling.md).'),
    category: identifier
      .optional()
      .describe('What kind of notification this is (`billing`, `news`): recipients opt out by category and channel, and email of a route with a category carries one-click unsubscribe.'),
    priority: z
      .enum(['transactional', 'bulk'])
      .default('transactional')
      .describe('Its class inside its tenant\'s share (docs/tenants.md, "Fair share"): a tenant\'s `transactional` jobs are sent before its `bulk` ones, so a password reset never waits behind that tenant\'s newsletter. A `bulk` route turns the fair queue on (`tenancy.fairShare: auto`).'),
    required: z
      .boolean()
      .default(false)
      .describe('A notification that must go (a password reset, an invoice by law): quiet hours and opt-outs do not hold it back; suppressions (hard bounces, complaints) still do.'),
  })
  .superRefine((route, ctx) => {
    // A digest's flush is one message for many events: no event's document belongs to it.
    if (route.digest && route.documents && route.documents.length > 0) ctx.addIssue({ code: 'custom', path: ['documents'], message: 'a digest route cannot have documents' });
  })
  .transform((route) => ({
    ...route,
    recipients: route.recipients ?? (parseAction(route.action).name === 'notify_owner' ? 'owner' : 'event'),
  }));

export type RouteMatch = z.output<typeof routeMatchSchema>;
export type RouteRecipients = z.output<typeof recipientsSchema>;
export type RouteTemplate = z.output<typeof templateSchema>;
export type RouteConfig = z.output<typeof routeSchema>;
