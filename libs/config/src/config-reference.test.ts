import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configReferenceTables, renderConfigDocs } from './config-reference';

const ROOT = resolve(__dirname, '../../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');

describe('docs/configuration.md', () => {
  it('is what the schema generates (run `npm run docs:config` after changing a schema)', () => {
    const expected = renderConfigDocs(read('tools/gen-config-docs.intro.md'));
    expect(read('docs/configuration.md') === expected, 'docs/configuration.md is out of date: run npm run docs:config').toBe(true);
  });

  it("shows the contract's example file as it is", () => {
    const example = /## A complete example[\s\S]*?```yaml\n([\s\S]*?)```/.exec(read('docs/configuration.md'))?.[1];
    expect(example).toBe(read('libs/config/src/fixtures/contract-example.yaml'));
  });

  it('describes every field', () => {
    const undescribed = configReferenceTables().flatMap((t) => t.rows.filter((r) => !r.description).map((r) => r.path));
    expect(undescribed).toEqual([]);
  });

  it('lists every section and every provider type, with the schema defaults', () => {
    const tables = configReferenceTables();
    const titles = tables.map((t) => t.title);
    for (const section of ['redis', 'log', 'ingest', 'dashboard', 'decision', 'delivery', 'routes', 'providers', 'mailboxes', 'limits', 'retention', 'webhooks', 'documents']) {
      expect(titles).toContain(`\`${section}\``);
    }
    for (const type of ['http', 'smtp', 'log', 'ses', 'sendgrid', 'twilio-sms', 'twilio-whatsapp', 'slack']) expect(titles).toContain(`\`providers.<channel>[]\` with \`type: ${type}\``);
    const row = (path: string) => tables.flatMap((t) => t.rows).find((r) => r.path === path);
    expect(row('delivery.attempts')).toMatchObject({ type: 'integer ≥ 1', default: '`25`' });
    expect(row('redis.shards')).toMatchObject({ type: 'integer 1–1024', default: '`16`' });
    expect(row('routes[].name')?.default).toBe('required');
  });
});
