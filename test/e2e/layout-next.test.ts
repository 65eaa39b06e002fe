import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { LAYOUT_VERSION, Suppressions, createRedis } from '@singleshot/store';
import { waitUntil, type AppProcess } from '@singleshot/test-harness';
import { layoutLab, readyz, type LayoutLab } from './support/layout';

// The next layout arrives beside a running fleet of this build: a copy of the
// build at the layout after ours (nextLayoutCopy: the version raised, one
// numbered migration, and a claim that records the layout it ran under) is
// started next to it, as a rolling update would. The copy migrates every shard
// at start; this build's delivery meets the new layout at its next claim,
// puts the job back and stops taking work (metric, /readyz), and restarted it
// refuses to start; the copy sends what is left. Every event is sent once,
// nothing is lost, a cancelled operation is never sent, and nothing posted
// after the migration is claimed by this build; a recipient suppressed
// meanwhile gets nothing.
const opOf = (id: string) => operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient: `${id}@example.com`, channel: 'webhook' });

describe('a copy at the next layout started beside a running fleet', () => {
  let lab: LayoutLab;

  beforeAll(async () => {
    lab = await layoutLab({ reminderDelay: '10s', timeoutMs: 2000 });
  });

  afterAll(async () => {
    await lab?.close();
  });

  const start = (only: string, build?: 'next') => lab.spawn(only, build);
  const post = async (front: AppProcess, id: string, type = 'order.created') => {
    const res = await fetch(`http://127.0.0.1:${await front.metricsPort()}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, source: 'shop', type, recipients: [`${id}@example.com`], data: {} }),
    });
    expect(res.status, `POST ${id}`).toBe(202);
  };
  const op = async (id: string) => lab.admin.hgetall(lab.keys.op(opOf(id)));
  const sends = (id: string) => lab.sink.accepted.get(opOf(id))?.count ?? 0;

  it('migrates at start; the old delivery stops claiming and refuses to restart; every event sent once by the build that may', { timeout: 120_000 }, async () => {
    const { admin, keys } = lab;
    const front = start('ingest,decision');
    const delivery = start('delivery');
    await Promise.all([front.metricsPort(), delivery.metricsPort()]);

    // This build at work: plain events sent, reminders scheduled (due after the
    // migration), two of them cancelled as soon as they are posted, one to a recipient who bounces.
    const before = Array.from({ length: 10 }, (_, i) => `before-${i}`);
    const reminders = Array.from({ length: 6 }, (_, i) => `reminder-${i}`);
    for (const id of before) await post(front, id);
    for (const id of reminders) await post(front, id, 'order.reminder');
    for (const id of reminders.slice(0, 2)) {
      const res = await fetch(`http://127.0.0.1:${await front.metricsPort()}/v1/cancellations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ source: 'shop', id, reason: 'changed their mind' }),
      });
      expect(res.status).toBe(200);
    }
    // One recipient bounces meanwhile: their reminder must end suppressed, whichever build claims it.
    const store = createRedis({ url: lab.redis.url, role: 'client' });
    await new Suppressions(store, keys, { retentionMs: 86_400_000 }).add({ channel: 'webhook', recipient: 'reminder-2@example.com', reason: 'bounce', origin: 'operator', by: 'test' });
    store.disconnect();
    await waitUntil(async () => (await Promise.all(before.map(op))).every((h) => h.status === 'sent'), 'the first events sent');
    // Scheduled; on a machine slow enough, some may already have come due and been claimed by this build.
    await waitUntil(async () => (await Promise.all(reminders.slice(2).map(op))).every((h) => ['scheduled', 'sending', 'sent', 'suppressed'].includes(h.status ?? '')), 'the reminders decided');

    // The copy's front starts: it migrates every shard before it takes work.
    const nextFront = start('ingest,decision', 'next');
    await nextFront.metricsPort();
    const migrated = async () => (await Promise.all(keys.allLayouts().map((k) => admin.get(k)))).every((v) => v === String(LAYOUT_VERSION + 1));
    await waitUntil(migrated, 'every shard migrated by the copy');
    expect(await Promise.all(keys.allLayouts().map((k) => admin.get(k.replace(/:layout$/, ':next-layout'))))).toEqual(Array.from({ length: 16 }, () => String(LAYOUT_VERSION + 1)));
    await waitUntil(() => nextFront.logs.filter((l) => l.event === 'layout_migration').length === 16, 'one layout_migration line per shard');

    // Posted now, only this build's delivery runs: its claim refuses, the job
    // goes back, and the process says it must be replaced.
    const after = Array.from({ length: 10 }, (_, i) => `after-${i}`);
    for (const id of after) await post(nextFront, id);
    await waitUntil(async () => (await delivery.metric('singleshot_layout_upgrade_required')) === 1, 'the old delivery process to meet the new layout');
    const ready = await readyz(delivery);
    expect(ready.status).toBe(503);
    expect(ready.body.checks?.layout).toBe(`upgrade required: Redis holds layout ${LAYOUT_VERSION + 1}`);
    expect(after.map(sends)).toEqual(after.map(() => 0));

    // Restarted, this build refuses to start against the new layout.
    await delivery.stop();
    const again = start('delivery');
    expect(await again.exited()).toBe(2);
    expect(again.stderr()).toContain('LAYOUT_UNKNOWN');
    expect(again.stderr()).not.toMatch(/^\s+at /m);

    // The copy's delivery takes over: what was posted after the migration, and the reminders coming due.
    start('delivery', 'next');
    const live = [...after, ...reminders.slice(3)];
    await waitUntil(async () => (await Promise.all(live.map(op))).every((h) => h.status === 'sent'), 'everything left to be sent by the copy', { timeoutMs: 60_000 });
    await waitUntil(async () => (await op('reminder-2')).status === 'suppressed', 'the bounced recipient\'s reminder to end suppressed');
    expect(sends('reminder-2')).toBe(0);

    for (const id of [...before, ...live]) expect(sends(id), `sends of ${id}`).toBe(1);
    for (const id of after) expect(await op(id), id).toMatchObject({ status: 'sent', attempts: '1', claimedUnder: String(LAYOUT_VERSION + 1) });
    for (const id of reminders.slice(0, 2)) {
      expect((await op(id)).status, id).toBe('cancelled');
      expect(sends(id), `sends of cancelled ${id}`).toBe(0);
    }
    const upgradeRequired = delivery.logs.filter((l) => l.event === 'layout_upgrade_required').length;
    console.warn(JSON.stringify({ figures: 'layout next', migratedShards: 16, sentBefore: before.length, sentAfter: live.length, cancelled: 2, suppressed: 1, upgradeRequired, duplicates: 0, lost: 0 }));
  });
});
