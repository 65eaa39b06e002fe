import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError } from './config-error';
import { parseConfig } from './load-config';

// The "Native providers" example of docs/providers.md must load as it is
// (secrets given inline here instead of as files), and each native entry
// rejects what no send could work with.
const page = readFileSync(resolve(__dirname, '../../../docs/providers.md'), 'utf8');
const section = page.slice(page.indexOf('## Native providers'));
const example = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

const inline = (yaml: string) => yaml.replace(/(\w+)File: \/run\/secrets\/[\w-]+/g, '$1: secret');

describe('native provider config', () => {
  it('the docs example loads, with the schema defaults filled in', () => {
    expect(example).toContain('type: ses');
    const config = parseConfig(parse(inline(example)), {});
    expect(config.providers.email?.map((p) => p.type)).toEqual(['ses', 'sendgrid']);
    expect(config.providers.sms?.[0]).toMatchObject({ type: 'twilio-sms', timeoutMs: 10_000 });
    expect(config.providers.chat?.[0]).toMatchObject({ type: 'slack', endpoint: 'https://slack.com/api' });
    expect(config.providers.email?.[1]).toMatchObject({ type: 'sendgrid', endpoint: 'https://api.sendgrid.com' });
    expect(config.providers.phone?.map((p) => p.type)).toEqual(['twilio-whatsapp', 'twilio-sms']);
    expect(config.providers.phone?.[0]).toMatchObject({ sessionWindow: 'check', endpoint: 'https://api.twilio.com', templates: { orders: { variables: { '1': '{{data.orderId}}' } } } });
  });

  it('twilio-whatsapp: the sender, template SIDs and the window mode are checked', () => {
    const bad = {
      routes: [],
      providers: {
        phone: [{ type: 'twilio-whatsapp', name: 'w', accountSid: `AC${'0'.repeat(32)}`, authToken: 'x', from: 'whatsapp:4915', sessionWindow: 'sometimes', templates: { orders: { contentSid: 'HX1' } } }],
      },
    };
    let issues: string[] = [];
    try {
      parseConfig(bad, {});
    } catch (err) {
      issues = (err as ConfigError).issues.map((i) => i.path);
    }
    expect(issues).toEqual(expect.arrayContaining(['providers.phone[0].from', 'providers.phone[0].sessionWindow', 'providers.phone[0].templates.orders.contentSid']));
  });

  it('names every problem by path', () => {
    const bad = {
      routes: [],
      providers: {
        sms: [{ type: 'twilio-sms', name: 't', accountSid: 'nope', authToken: 'x' }],
        chat: [{ type: 'slack', name: 's' }],
        email: [{ type: 'sendgrid', name: 'g', from: 'a@example.test' }],
      },
    };
    let issues: string[] = [];
    try {
      parseConfig(bad, {});
    } catch (err) {
      issues = (err as ConfigError).issues.map((i) => i.path);
    }
    expect(issues).toEqual(expect.arrayContaining(['providers.sms[0].accountSid', 'providers.sms[0].from', 'providers.chat[0].token', 'providers.email[0].apiKey']));
  });
});
