import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'pg';
import { startTestPostgres, waitUntil, type TestPostgres } from '@singleshot/test-harness';
import { enqueue, outboxDdl, OutboxError } from './index';

let pg: TestPostgres;
let app: Client;
let relay: Client;
const notified: string[] = [];

beforeAll(async () => {
  pg = await startTestPostgres();
  [app, relay] = [new Client({ connectionString: pg.url }), new Client({ connectionString: pg.url })];
  await Promise.all([app.connect(), relay.connect()]);
  await app.query('CREATE SCHEMA app');
  await app.query(outboxDdl('app.outbox'));
  relay.on('notification', (n) => notified.push(`${n.channel}:${n.payload ?? ''}`));
  await relay.query('LISTEN app_outbox');
}, 60_000);

afterAll(async () => {
  await Promise.all([app?.end(), relay?.end()]);
  await pg?.destroy();
});

const rows = async () => (await app.query<{ event_id: string; source: string; type: string; recipients: unknown; data: unknown }>('SELECT event_id, source, type, recipients, data FROM app.outbox ORDER BY seq')).rows;

describe('@singleshot/outbox on PostgreSQL', () => {
  it('writes and notifies only when the caller\'s transaction commits', async () => {
    const options = { table: 'app.outbox', channel: 'app_outbox' };
    await app.query('BEGIN');
    await enqueue(app, { id: 'e-rolled-back', source: 'shop', type: 'order.created' }, options);
    await app.query('ROLLBACK');
    await app.query('BEGIN');
    await enqueue(app, { id: 'e-1', source: 'shop', type: 'order.created', recipients: ['a@example.com'], data: { orderId: 1 } }, options);
    expect(notified).toEqual([]);
    await app.query('COMMIT');
    await waitUntil(() => notified.length > 0, 'the notification');
    expect(notified).toEqual(['app_outbox:app.outbox']);
    expect(await rows()).toEqual([{ event_id: 'e-1', source: 'shop', type: 'order.created', recipients: ['a@example.com'], data: { orderId: 1 } }]);
  });

  it('refuses an event singleshot would refuse, writing nothing', async () => {
    const before = (await rows()).length;
    for (const event of [
      { id: '', source: 'shop', type: 't' },
      { id: 'x', source: 'mail', type: 't' },
      { id: 'x', source: 'shop', type: '' },
      { id: 'x', source: 'shop', type: 't', recipients: [''] },
      { id: 'x', source: 'shop', type: 't', data: [] as unknown as Record<string, unknown> },
    ]) {
      await expect(enqueue(app, event, { table: 'app.outbox' })).rejects.toMatchObject({ code: 'INVALID_OUTBOX_EVENT' });
    }
    expect((await rows()).length).toBe(before);
  });

  it('takes only plain table names into its SQL', () => {
    expect(() => outboxDdl('x; DROP TABLE users')).toThrow(OutboxError);
  });
});
