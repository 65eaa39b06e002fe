import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT, spawnApps, startSmtpSink, startTestRedis, waitUntil, type AppProcess, type SmtpSink, type TestRedis } from '@singleshot/test-harness';
import { sha } from './support/documents';

// The purchase-order example of docs/templates-and-documents.md, taken from
// the page itself: its config, its two template files and its curl body, run
// against a real fleet (only Redis, ports and the SMTP relay's port are filled in).
const HEADING = '## A purchase order, end to end';
const section = (() => {
  const page = readFileSync(join(REPO_ROOT, 'docs/templates-and-documents.md'), 'utf8');
  const start = page.indexOf(HEADING);
  if (start < 0) throw new Error(`no "${HEADING}" section in docs/templates-and-documents.md`);
  const end = page.indexOf('\n## ', start + HEADING.length);
  return page.slice(start, end < 0 ? undefined : end);
})();
const block = (lang: string) => {
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  if (!m?.[1]) throw new Error(`no ${lang} block in the docs section`);
  return m[1];
};

let redis: TestRedis;
let sink: SmtpSink;
let fleet: AppProcess;
let dir: string;

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startSmtpSink();
  dir = mkdtempSync(join(tmpdir(), 'ss-readme-docs-'));
  const config = parseYaml(block('yaml')) as Record<string, unknown> & { providers: { email: { port: number }[] }; documents: { store: { dir: string } } };
  (config.providers.email[0] as { port: number }).port = sink.port;
  config.documents.store.dir = join(dir, 'documents');
  Object.assign(config, {
    redis: { url: redis.url },
    ingest: { port: 0, host: '127.0.0.1' },
    decision: { metricsPort: 0 },
    delivery: { metricsPort: 0 },
    log: { level: 'warn' },
  });
  writeFileSync(join(dir, 'purchase-order.hbs'), block('handlebars'));
  writeFileSync(join(dir, 'order-email.mjml'), block('xml'));
  writeFileSync(join(dir, 'singleshot.config.json'), JSON.stringify(config));
  fleet = spawnApps('ingest,decision,render,delivery', join(dir, 'singleshot.config.json'));
  await fleet.metricsPort();
});

afterAll(async () => {
  await fleet?.stop();
  await sink?.close();
  await redis?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/templates-and-documents.md: a purchase-order PDF for an order event', () => {
  it('sends each recipient one text + HTML email with the same PDF, generated once', async () => {
    const curl = block('sh');
    const body = /-d '([\s\S]*?)'\s*$/.exec(curl.trim())?.[1] as string;
    const event = JSON.parse(body) as { recipients: string[] };
    const res = await fetch(`http://127.0.0.1:${await fleet.metricsPort()}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(202);
    await waitUntil(() => sink.taken().length >= event.recipients.length, 'an email per recipient', { timeoutMs: 60_000 });
    const mails = await Promise.all(sink.taken().map((m) => simpleParser(m.raw)));
    expect(sink.taken().map((m) => m.envelope.to).flat().sort()).toEqual([...event.recipients].sort());
    const checksums = new Set<string>();
    for (const mail of mails) {
      expect(mail.subject).toBe('Purchase order PO-1001');
      expect(mail.text).toContain('from Bolts & Nuts Ltd is attached (€17.00)');
      expect(mail.html).toContain('Purchase order PO-1001');
      expect(mail.html).toContain('From Bolts &amp; Nuts Ltd, total €17.00');
      expect(mail.attachments.map((a) => a.filename)).toEqual(['PO-PO-1001.pdf']);
      const pdf = mail.attachments[0]?.content as Buffer;
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      checksums.add(sha(pdf));
    }
    expect(checksums.size).toBe(1);
    expect(await fleet.metric('singleshot_document_renders_total', { result: 'stored' })).toBe(1);
    expect(await fleet.metric('singleshot_document_renders_total')).toBe(1);
  });
});
