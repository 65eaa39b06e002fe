import type { ConfigInput } from './schema';

/**
 * The embedded `npm start` experience when there is no config file: every
 * notification is appended to `./.singleshot/notifications.ndjson` by the
 * `log` provider, so a first run shows results without any account anywhere.
 *
 * Template context (see route-schema.ts):
 * - events: `source`, `type`, `id`, `data`, `recipients`;
 * - mail: `mail.{from,to,subject,date,excerpt,mailbox}`, `owner`.
 *
 * A config file replaces these entirely (its absent sections get the schema's
 * defaults, which have no routes): mixing hidden routes into a user's file
 * would send notifications nobody configured.
 */
export const DEFAULT_CONFIG_INPUT: ConfigInput = {
  providers: {
    log: [{ type: 'log', name: 'log' }],
  },
  routes: [
    {
      name: 'default-mail',
      match: { source: 'mail' },
      action: 'notify_owner:v1',
      channel: 'log',
      recipients: 'owner',
      template: { subject: 'New mail: {{mail.subject}}', text: 'From {{mail.from}}: {{mail.subject}}' },
    },
    {
      name: 'default-events',
      match: {},
      action: 'notify',
      channel: 'log',
      recipients: 'event',
      // `{{fields data}}`: the event's data as `key: value` pairs (a bare `{{data}}` reads `[object Object]`).
      template: { subject: '{{type}} from {{source}}', text: 'Event {{id}} ({{type}}) from {{source}}: {{fields data}}' },
    },
  ],
};
