import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '@singleshot/config';
import { compileRouteTemplates } from './route-templates';

const dir = mkdtempSync(join(tmpdir(), 'ss-rt-'));
writeFileSync(join(dir, 'order.mjml'), '<mjml><mj-body><mj-section><mj-column><mj-text>Order {{data.orderId}} for {{data.name}}</mj-text></mj-column></mj-section></mj-body></mjml>');
writeFileSync(join(dir, 'bad.mjml'), '<mjml><mj-body><mj-colum>x</mj-colum></mj-body></mjml>');
writeFileSync(join(dir, 'order.txt'), 'Order {{data.orderId}} for {{data.name}}');

const config = (template: Record<string, unknown>) =>
  parseConfig(
    { providers: { log: [{ name: 'l', type: 'log', path: join(dir, 'x') }] }, routes: [{ name: 'orders', match: {}, action: 'notify', channel: 'log', template }] },
    {},
    { baseDir: dir },
  );

describe('compileRouteTemplates', () => {
  it('compiles MJML once to responsive HTML; text stays unescaped, HTML escapes', async () => {
    const t = await compileRouteTemplates(config({ subject: 'Order {{data.orderId}}', textFile: 'order.txt', mjmlFile: 'order.mjml' }));
    const out = t.message('orders', { data: { orderId: 'o-1', name: 'A & B' } });
    expect(out.subject).toBe('Order o-1');
    expect(out.text).toBe('Order o-1 for A & B');
    expect(out.html).toContain('Order o-1 for A &amp; B');
    expect(out.html).toContain('<!doctype html>');
  });

  it('an MJML error stops the start as a config error naming the path', async () => {
    const err = await compileRouteTemplates(config({ mjmlFile: 'bad.mjml' }), 'test.yaml').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual([{ path: 'routes[0].template.mjmlFile', message: expect.stringMatching(/invalid template: .*mj-colum/) }]);
  });
});
