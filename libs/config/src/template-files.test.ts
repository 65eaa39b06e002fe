import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config-error';
import { parseConfig } from './load-config';

const dir = mkdtempSync(join(tmpdir(), 'ss-tpl-'));
writeFileSync(join(dir, 'ok.hbs'), 'Order {{data.orderId}}');
writeFileSync(join(dir, 'broken.hbs'), 'line one\n{{#each data.items}}never closed');

const base = (route: Record<string, unknown>) => ({
  providers: { email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: 2525, secure: false, from: 'a@example.test' }] },
  routes: [{ name: 'orders', match: {}, action: 'notify', channel: 'email', ...route }],
});

function issues(input: unknown): { path: string; message: string }[] {
  try {
    parseConfig(input, {}, { baseDir: dir });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

describe('template files at config load', () => {
  it('resolves template files against the config folder', () => {
    const config = parseConfig(base({ template: { subject: 'x', htmlFile: 'ok.hbs' }, documents: [{ name: 'po', template: 'ok.hbs' }] }), {}, { baseDir: dir });
    expect(config.routes[0]?.template.htmlFile).toBe(join(dir, 'ok.hbs'));
    expect(config.routes[0]?.documents[0]).toEqual({ name: 'po', template: join(dir, 'ok.hbs'), format: 'pdf', version: 'v1' });
    expect(config.documents.store).toEqual({ type: 'fs', dir: '.singleshot/documents' });
  });

  it('a missing file or a syntax error is a config error naming its path', () => {
    const found = issues(
      base({ template: { subject: 'Order {{#if}}', textFile: 'nope.hbs', mjmlFile: 'broken.hbs' }, documents: [{ name: 'po', template: 'missing.hbs', fileName: '{{oops' }] }),
    );
    const paths = found.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['routes[0].template.subject', 'routes[0].template.textFile', 'routes[0].template.mjmlFile', 'routes[0].documents[0].template', 'routes[0].documents[0].fileName']));
    expect(found.find((i) => i.path === 'routes[0].template.textFile')?.message).toContain(`cannot read template ${join(dir, 'nope.hbs')} (ENOENT)`);
    expect(found.find((i) => i.path === 'routes[0].template.mjmlFile')?.message).toMatch(/invalid template .*broken\.hbs/);
  });

  it('one HTML body at most, text or textFile', () => {
    const found = issues(base({ template: { text: 'a', textFile: 'ok.hbs', html: '<p>x</p>', htmlFile: 'ok.hbs' } }));
    expect(found.map((i) => i.message)).toEqual(expect.arrayContaining(['give one of html, htmlFile, mjmlFile (got html, htmlFile)', 'give either text or textFile, not both']));
  });

  it('an S3 store needs a bucket; its secret is read from a file', () => {
    writeFileSync(join(dir, 's3.secret'), 'shh\n');
    expect(issues({ documents: { store: { type: 's3' } } }).map((i) => i.path)).toContain('documents.store.bucket');
    const config = parseConfig({ documents: { store: { type: 's3', bucket: 'b', accessKeyId: 'k', secretAccessKeyFile: 's3.secret' } } }, {}, { baseDir: dir });
    expect(config.documents.store).toMatchObject({ type: 's3', bucket: 'b', secretAccessKey: 'shh' });
  });
});
