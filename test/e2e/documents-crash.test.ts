import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { documentKey } from '@singleshot/core';
import { FsDocumentStore } from '@singleshot/documents';
import type { Runtime } from '@singleshot/runtime';
import {
  CLI_MAIN,
  REPO_ROOT,
  spawnApps,
  startSmtpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type SmtpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { attachmentsFor, orderEvent, recipients, sha, templateDir } from './support/documents';

// A render process SIGKILLed in the middle of generating a large purchase
// order (real processes, real Redis, real SMTP sink, filesystem store): the
// next render process takes the document over after its lease, stores it once,
// and every recipient gets exactly one email with that document.
let redis: TestRedis;
let sink: SmtpSink;
let rt: Runtime;
let fleet: AppProcess;
let render: AppProcess | undefined;
let config: { file: string; cleanup(): void };
let tpl: ReturnType<typeof templateDir>;

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startSmtpSink();
  tpl = templateDir();
  const input = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 5000, attempts: 3, backoffMs: [100], concurrency: 8, metricsPort: 0 },
    routes: [
      {
        name: 'orders',
        match: { source: 'shop' },
        action: 'notify',
        channel: 'email',
        template: { subject: 'PO {{data.orderId}}', text: 'Attached.' },
        documents: [{ name: 'purchase-order', template: tpl.template, fileName: 'PO-{{data.orderId}}.pdf' }],
      },
    ],
    providers: { email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: sink.port, secure: false, from: 'orders@example.test' }] },
    documents: { store: { type: 'fs', dir: join(tpl.dir, 'documents') }, attempts: 5, backoffMs: [100], leaseMs: 10_000, waitPollMs: 500 },
  });
  config = writeConfigFile(input);
  rt = await testRuntime(input);
  fleet = spawnApps('ingest,decision,delivery', config.file);
  render = spawnApps('render', config.file);
  await Promise.all([fleet.metricsPort(), render.metricsPort()]);
});

afterAll(async () => {
  await render?.stop();
  await fleet?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  config?.cleanup();
  tpl?.cleanup();
});

describe('render worker SIGKILLed mid-generation', () => {
  it('the document is stored once and each email is sent once, with the same attachment', async () => {
    const to = recipients('crash');
    // 5,000 pages of two rows: a document that takes a while to lay out (the
    // lease stays longer than a generation on a loaded machine, as it must).
    const res = await fetch(`http://127.0.0.1:${await fleet.metricsPort()}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(orderEvent('PO-9', to, 5_000)),
    });
    expect(res.status).toBe(202);
    const { messageKey } = (await res.json()) as { messageKey: string };
    const key = documentKey({ messageKey, name: 'purchase-order', version: 'v1' });

    await waitUntil(async () => (await rt.documents.get(key))?.status === 'rendering', 'the render to start', { intervalMs: 10 });
    render?.signal('SIGKILL');
    await render?.exited();
    const killed = await rt.documents.get(key);
    // Killed before its commit: nothing was stored, and the deliveries wait for it.
    expect(killed).toMatchObject({ status: 'rendering', attempts: 1 });
    // The decision records the message's operations right after it queued the render.
    const ops = await waitUntil(async () => {
      const found = (await rt.messages.get(messageKey))?.operations ?? [];
      return found.length === 10 ? found : undefined;
    }, 'the decision to be recorded');
    await waitUntil(async () => (await rt.operations.get(ops[0] as string))?.waitingFor, 'the first operation to be marked waiting');
    expect(sink.taken()).toHaveLength(0);
    // Not silent: `ops show` says what the operation waits for, and how its document stands.
    const run = promisify(execFile);
    const cli = (...args: string[]) => run(process.execPath, [CLI_MAIN, 'ops', 'show', ...args, '--config', config.file], { cwd: REPO_ROOT, env: { ...process.env, LOG_LEVEL: 'warn' } });
    const shown = JSON.parse((await cli(ops[0] as string, '--json')).stdout) as { operation: Record<string, unknown>; document: Record<string, unknown> };
    expect(shown.operation).toMatchObject({ status: 'pending', attempts: 0, waitingFor: 'document:purchase-order', waitingKey: key });
    expect(shown.document).toMatchObject({ documentKey: key, status: 'rendering', attempts: 1 });
    expect((await cli(ops[0] as string)).stdout).toMatch(/pending, waiting for document:purchase-order since/);

    render = spawnApps('render', config.file);
    await waitUntil(async () => (await Promise.all(ops.map(async (k) => (await rt.operations.get(k))?.status))).every((s) => s === 'sent'), 'ten emails sent', { timeoutMs: 120_000 });

    const doc = await rt.documents.get(key);
    expect(doc).toMatchObject({ status: 'stored', attempts: 2 });
    const journal = await rt.journal.forOperation(key, doc?.journalIds ?? []);
    expect(journal.map((e) => e.type)).toEqual(['document_stored']);
    const storeKey = doc?.stored?.storeKey as string;
    const bytes = (await new FsDocumentStore(join(tpl.dir, 'documents')).get(storeKey)) as Buffer;
    expect(sha(bytes)).toBe(doc?.stored?.checksum);
    expect(existsSync(join(tpl.dir, 'documents', storeKey))).toBe(true);
    for (const r of to) expect(await attachmentsFor(sink, r), r).toEqual([{ fileName: 'PO-PO-9.pdf', checksum: doc?.stored?.checksum, html: false }]);
  });
});
