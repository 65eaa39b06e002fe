/**
 * How long one poll of a folder with 10,000 small mails takes, from cold
 * (no cursor: every mail fetched and handed over) and warm (cursor at the
 * end: one EXAMINE and one cursor read). Prints the figures; asserts only
 * what the polls did, never how long they took.
 *
 * The mails are delivered into the maildir (as an MTA would) rather than by
 * 10,000 APPENDs, which would take ~25 s of setup; Dovecot indexes them on
 * the first SELECT, which is part of the cold figure, as on a real server
 * after a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@singleshot/store';
import { createRedis, ImapCursorStore, KeyBuilder } from '@singleshot/store';
import { startDovecot, type TestDovecot, startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { parseImapMail } from './parse-imap-mail';
import { ImapSource } from './imap-source';
import type { HandOver, ImapLogger } from './types';

const COUNT = 10_000;
const quiet: ImapLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

let dovecot: TestDovecot;
let redisServer: TestRedis;
let redis: RedisClient;
let cursors: ImapCursorStore;

beforeAll(async () => {
  [dovecot, redisServer] = await Promise.all([startDovecot(), startTestRedis({ appendfsync: 'everysec' })]);
  redis = createRedis({ url: redisServer.url, role: 'client' });
  cursors = new ImapCursorStore(redis, new KeyBuilder('tbench', 4));
  await dovecot.createFolder('Bench');
  for (let i = 0; i < COUNT; i++) {
    dovecot.deliverToMaildir(
      'Bench',
      Buffer.from(
        `From: sender${i % 50}@example.test\r\nTo: support@example.test\r\nSubject: bench ${i}\r\n` +
          `Date: Tue, 05 Mar 2024 10:00:00 +0000\r\nMessage-ID: <bench-${i}@example.test>\r\n\r\nsmall body ${i}\r\n`,
      ),
    );
  }
});

afterAll(async () => {
  redis?.disconnect();
  await Promise.all([dovecot?.stop(), redisServer?.destroy()]);
});

function source(mailboxId: string, handOver: HandOver): ImapSource {
  return new ImapSource(
    { mailboxId, host: dovecot.host, port: dovecot.port, secure: false, user: dovecot.user, password: dovecot.password, folder: 'Bench' },
    { cursor: cursors, handOver, logger: quiet },
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}

describe(`one IMAP poll of ${COUNT.toLocaleString('en')} mails`, () => {
  it('cold and warm, with a hand-over that only records and one that parses', async () => {
    let recorded = 0;
    const bare = source('bench-bare', async () => {
      recorded++;
    });
    const keys = new Set<string>();
    const parsing = source('bench-parse', async (raw, meta) => {
      keys.add((await parseImapMail(raw, meta)).messageKey);
    });
    try {
      const [cold, coldMs] = await timed(() => bare.pollOnce());
      const [warm, warmMs] = await timed(() => bare.pollOnce());
      const [coldParse, coldParseMs] = await timed(() => parsing.pollOnce());
      const [warmParse, warmParseMs] = await timed(() => parsing.pollOnce());

      expect(cold).toMatchObject({ handedOver: COUNT, pending: 0, lastUid: COUNT });
      expect(warm).toMatchObject({ handedOver: 0, lastUid: COUNT });
      expect(recorded).toBe(COUNT);
      expect(coldParse.handedOver).toBe(COUNT);
      expect(warmParse.handedOver).toBe(0);
      expect(keys.size).toBe(COUNT);

      const line = (label: string, ms: number) => `  ${label.padEnd(44)} ${ms.toFixed(0).padStart(7)} ms`;
      console.warn(
        [
          `IMAP poll of ${COUNT} small mails (Dovecot ${dovecot.host}:${dovecot.port}, cursor in Redis):`,
          line('cold, hand-over records only (incl. indexing)', coldMs),
          line('warm, hand-over records only', warmMs),
          line('cold, hand-over runs parseRawMail', coldParseMs),
          line('warm, hand-over runs parseRawMail', warmParseMs),
        ].join('\n'),
      );
    } finally {
      await Promise.all([bare.stop(), parsing.stop()]);
    }
  });
});
