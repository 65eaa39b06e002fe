import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { CLI_MAIN, REPO_ROOT, spawnApps, startTestRedis, testConfig, waitUntil, writeConfigFile, type AppProcess, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// An operation's feedback in its journal view: a Postmark bounce posted to a
// real ingest process, then `singleshot ops show --json` and the dashboard's
// `GET /admin/api/operations/:key` list its journal entry under `journal`,
// as `journal tail` lists it.
const AUTH = { authorization: `Basic ${Buffer.from('admin:feedback-journal-password').toString('base64')}` };
const POSTMARK = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('pm:pm-secret').toString('base64')}` };
const BOUNCE = readFileSync(join(REPO_ROOT, 'test/fixtures/feedback/postmark-bounce.json'), 'utf8');

let redis: TestRedis;
let fleet: AppProcess;
let rt: Runtime;
let configFile: string;
let cleanup: () => void;
let dashboard: string;
const operationKey = sha256Hex('feedback-journal:op');

interface Entry {
  id: string;
  type: string;
  fields: Record<string, string>;
}

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--config', configFile], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(async () => {
  redis = await startTestRedis();
  const config = testConfig({
    redisUrl: redis.url,
    dashboard: { port: 0, host: '127.0.0.1', auth: { username: 'admin', password: 'feedback-journal-password' } },
    feedback: { postmark: { username: 'pm', password: 'pm-secret' } },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,dashboard', configFile);
  const ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  dashboard = `http://127.0.0.1:${await waitUntil(() => fleet.logs.find((l) => l.event === 'dashboard_listening')?.port as number | undefined, 'the dashboard')}`;
  rt = await testRuntime(config);

  // A sent operation, recorded by the real claim and commit scripts.
  const data = { operationKey, messageKey: sha256Hex('feedback-journal:msg'), recipient: 'alice@example.net', channel: 'email' };
  const claim = await rt.operations.claim({ ...data, owner: 'test', leaseMs: 60_000 });
  if (claim.kind !== 'go') throw new Error(`claim: ${claim.kind}`);
  await rt.operations.commit({ ...data, fence: claim.fence, outcome: 'sent', provider: 'postmark-smtp', externalId: 'pm-1' });
  const res = await fetch(`${ingest}/v1/feedback/postmark`, { method: 'POST', headers: POSTMARK, body: BOUNCE.replaceAll('__OP__', operationKey) });
  expect(await res.json()).toMatchObject({ recorded: 1 });
});

afterAll(async () => {
  await fleet?.stop();
  await rt?.close();
  await redis?.destroy();
  cleanup?.();
});

/** The feedback entry as the journal tail has it: the reference the views must match. */
function journaled(): Entry {
  const tail = cli('journal', 'tail', '--json');
  expect(tail.status, tail.stderr).toBe(0);
  const entries = tail.stdout.trim().split('\n').map((l) => JSON.parse(l) as Entry);
  const feedback = entries.filter((e) => e.type === 'feedback' && e.fields.op === operationKey);
  expect(feedback).toHaveLength(1);
  expect(feedback[0]?.fields).toMatchObject({ provider: 'postmark', extId: 'Bounce:4323372036854775807', reason: 'bounced' });
  return feedback[0] as Entry;
}

describe("an operation's feedback in its journal view", () => {
  it('ops show --json lists the feedback entry under journal, after the commit', () => {
    const entry = journaled();
    const shown = cli('ops', 'show', operationKey, '--json');
    expect(shown.status, shown.stderr).toBe(0);
    const parsed = JSON.parse(shown.stdout) as { journal: Entry[]; feedback: { events: Array<{ journalId: string }> } };
    expect(parsed.journal.map((e) => e.type)).toEqual(['sent', 'feedback']);
    expect(parsed.journal[1]).toMatchObject({ id: entry.id, fields: entry.fields });
    expect(parsed.feedback.events.map((e) => e.journalId)).toEqual([entry.id]);

    const table = cli('ops', 'show', operationKey);
    expect(table.stdout).toMatch(new RegExp(`^ +${entry.id} +feedback +postmark +Bounce:4323372036854775807 +bounced$`, 'm'));
  });

  it('GET /admin/api/operations/:key lists it under journal too', async () => {
    const entry = journaled();
    const res = await fetch(`${dashboard}/admin/api/operations/${operationKey}`, { headers: AUTH });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { journal: Entry[] };
    expect(body.journal.map((e) => e.type)).toEqual(['sent', 'feedback']);
    expect(body.journal[1]).toMatchObject({ id: entry.id, fields: entry.fields });
  });
});
