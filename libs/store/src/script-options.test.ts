import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from './connection';
import { TERMINAL_STATUSES } from '@singleshot/core';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis } from './connection';
import { JOURNAL_FIELDS } from './journal';
import { KeyBuilder } from './keys';
import { LAYOUT_VERSION } from './layout-version';
import { SCRIPTS, ScriptKeysError, keyCount, runScript, takesItems, type ScriptName, type ScriptOptions } from './scripts';

// Every field of every script's options, filled: tsc rejects a missing or an
// unknown field here, and the test below rejects a field the Lua reads that is
// not here, or one named here that the Lua never reads.
const FULL: { [N in ScriptName]: Required<ScriptOptions[N]> } = {
  'cancel-op': { now: '1', operationKey: 'k', messageKey: 'm', recipient: 'r', channel: 'c', reason: 'why', by: 'u', retentionMs: '1', journalMinId: '0' },
  'cancel-message': { now: '1', recipients: ['r'], reason: 'why', by: 'u', retentionMs: '1' },
  'cancel-key': { mode: 'join', now: '1', messageKey: 'm', recipients: ['r'], reason: 'why', by: 'u', retentionMs: '1' },
  'claim': { leaseMs: '1', now: '1', leaseUntil: '2', owner: 'w', operationKey: 'k', messageKey: 'm', recipient: 'r', channel: 'c', retentionMs: '1', journalMinId: '0', category: 'billing', required: false, settleMs: '1', waitReason: 'document', waitUntil: '2', waitingFor: 'document:x', waitingKey: 'd', limitNote: 'global: 2 of 2' },
  'commit': {
    fence: '1',
    outcome: 'sent',
    now: '1',
    retentionMs: '1',
    journalMinId: '0',
    operationKey: 'k',
    messageKey: 'm',
    recipient: 'r',
    channel: 'c',
    provider: 'p',
    externalId: 'x',
    errorCode: 'E',
    errorMessage: 'e',
    reason: 'why',
    releaseTo: 'pending',
    refundAttempt: true,
    nextAttemptAt: '1',
    waitReason: 'breaker_open',
  },
  'doc-claim': { leaseMs: '1', now: '1', leaseUntil: '2', owner: 'w', retentionMs: '1', messageKey: 'm' },
  'doc-commit': {
    fence: '1',
    outcome: 'stored',
    now: '1',
    retentionMs: '1',
    journalMinId: '0',
    documentKey: 'd',
    name: 'n',
    messageKey: 'm',
    checksum: 'c',
    size: '1',
    storeKey: 's',
    fileName: 'f',
    contentType: 't',
    errorCode: 'E',
    errorMessage: 'e',
    nextAttemptAt: '1',
  },
  'doc-replay': { now: '1', by: 'u', journalMinId: '0', documentKey: 'd' },
  'extend-lock': { fence: '1', leaseMs: '1', leaseUntil: '2' },
  'feedback-record': { operationKey: 'k', eventId: 'e', source: 'ses', type: 'delivered', rank: '2', hard: '0', now: '1', retentionMs: '1', journalMinId: '0' },
  'imap-cursor-advance': { uidValidity: '1', uid: 1, now: '1' },
  'index-touch': { operationKey: 'k', dueAt: '1' },
  'message-arrive': { now: '1', via: 'api', retentionMs: '1', tenant: 'acme' },
  'digest-join': { now: '1', group: 'g', closeAt: '2', maxItems: '100', maxBytes: '1000', retentionMs: '1', route: 'r', recipient: 'a@x.test', key: '' },
  'digest-close': { mode: 'close', seq: '1', now: '1', group: 'g' },
  'digest-remove': { retentionMs: '1' },
  'message-decided': { now: '1', operationKeys: ['a'], targets: ['email:r'], retentionMs: '1', trace: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', digestGroups: ['g'], digestTargets: ['["r","a@x.test",""]'] },
  'mutex-acquire': { owner: 'w', leaseMs: '1' },
  'mutex-release': { owner: 'w' },
  'layout-stamp': { version: '2', expect: '1' },
  'op-schedule': { now: '1', dueAt: '2', sweepAt: '3', reason: 'send_at', operationKey: 'k', messageKey: 'm', recipient: 'r', channel: 'c', retentionMs: '1', journalMinId: '0' },
  'suppression-write': { mode: 'add', now: '1', recipient: 'r', field: 's|email|*', value: '{}', optOuts: ['p|email|news'], detail: '{}' },
  'suppression-page': { now: '1', count: 10, score: '1', recipient: 'r' },
  'suppression-copy': { set: ['s|email|*', ''], remove: [], version: '1' },
  'fair-move': { listPrefix: 'p', adds: [{ tenant: 'a', weight: 1, count: 1, bulk: false, cap: 0 }], inPrefix: 'i', started: [], ended: [], startedUntil: '2', movedUntil: '3', window: 2, taken: '0', scale: '720720', now: '1' },
  'rate-limit': { now: '1', windowStart: '0', windowMs: '1', max: 1, operationKey: 'k', force: false },
  'replay': { now: '1', by: 'u', via: 'cli', retentionMs: '1', journalMinId: '0', operationKey: 'k' },
};

/** The Lua without comments (block headers and line comments). */
const code = (lua: string) => lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--[^\n]*/g, '');

describe('script options', () => {
  for (const name of Object.keys(SCRIPTS) as ScriptName[]) {
    it(`${name} reads exactly the option fields its type names`, () => {
      const lua = code(SCRIPTS[name].lua);
      // A script that takes items decodes each item's options (runEach).
      expect(lua).toContain(takesItems(name) ? 'cjson.decode(ARGV[at])' : 'cjson.decode(ARGV[1])');
      const read = new Set([...lua.matchAll(/\bo\.([A-Za-z]+)/g)].map((m) => m[1]));
      expect([...read].sort()).toEqual(Object.keys(FULL[name]).sort());
    });

    it(`${name} takes the KEYS its signature says: its header lists KEYS[1..${SCRIPTS[name].keys}], its code reads none beyond`, () => {
      const { lua, keys } = SCRIPTS[name];
      const header = /^--\[\[([\s\S]*?)\]\]/.exec(lua)?.[1] ?? '';
      const listed = [...header.matchAll(/^\s*KEYS\[(\d+)\]/gm)].map((m) => Number(m[1]));
      expect(listed).toEqual(Array.from({ length: keys }, (_, i) => i + 1));
      const used = [...code(lua).matchAll(/\bKEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      expect(Math.max(0, ...used)).toBeLessThanOrEqual(keys);
      // A script that takes items reads an item's keys from K (that item's KEYS), never from KEYS by number.
      if (takesItems(name)) {
        expect(used).toEqual([]);
        expect(Math.max(...[...code(lua).matchAll(/\bK\[(\d+)\]/g)].map((m) => Number(m[1])))).toBe(keys);
      }
    });
  }

  it('shared fragments are expanded into the scripts, none left as an include line', () => {
    for (const { lua } of Object.values(SCRIPTS)) expect(lua).not.toMatch(/^--@include/m);
    for (const name of ['claim', 'commit', 'replay'] as const) {
      expect(SCRIPTS[name].lua).toContain('local function isTerminal(status)');
      expect(SCRIPTS[name].lua).toContain('local function journalAdd(');
    }
  });

  it('the Lua terminal check names the statuses core calls terminal', () => {
    const body = /local function isTerminal\(status\)([\s\S]*?)\nend/.exec(SCRIPTS.claim.lua)?.[1] ?? '';
    expect([...body.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).sort()).toEqual([...TERMINAL_STATUSES].sort());
  });

  it('every script that writes an operation hash checks the layout first, on its last KEY, before anything else', () => {
    const writers = (Object.keys(SCRIPTS) as ScriptName[]).filter((name) => /'(HSET|HSETNX|HDEL)', opKey/.test(code(SCRIPTS[name].lua)));
    expect(writers.sort()).toEqual(['cancel-op', 'claim', 'commit', 'op-schedule', 'replay']);
    for (const name of writers) {
      const body = code(SCRIPTS[name].lua);
      // A script that takes items checks each item's layout, first in its function (K holds the item's KEYS).
      const check = takesItems(name)
        ? `local refusedBy = layoutRefusal(K[${SCRIPTS[name].keys}])\n  if refusedBy then return { 'upgrade_required', refusedBy } end`
        : `local refusedBy = layoutRefusal(KEYS[${SCRIPTS[name].keys}])\nif refusedBy then return { 'upgrade_required', refusedBy } end`;
      expect(body, name).toContain(check);
      // No Redis call runs before the check (the included fragments only define functions).
      expect(body.slice(0, body.indexOf(check)).replace(/local function [\s\S]*?\nend/g, ''), name).not.toMatch(/redis\.call/);
    }
  });

  it('the layout the Lua was written for is LAYOUT_VERSION', () => {
    expect(/local LAYOUT = '(\d+)'/.exec(SCRIPTS.claim.lua)?.[1]).toBe(String(LAYOUT_VERSION));
  });

  it('the journal fields the Lua writes are the ones journal.ts reads', () => {
    const list = /local JOURNAL_FIELDS = \{([^}]*)\}/.exec(SCRIPTS.commit.lua)?.[1] ?? '';
    expect([...list.matchAll(/'([A-Za-z]+)'/g)].map((m) => m[1])).toEqual([...JOURNAL_FIELDS]);
  });
});

describe('runScript', () => {
  let server: TestRedis;
  let redis: RedisClient;
  const keys = new KeyBuilder('so', 2);

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedis({ url: server.url, role: 'client' });
  });

  afterAll(async () => {
    redis.disconnect();
    await server.destroy();
  });

  it('refuses a KEYS count other than its signature, with a code, before Redis sees it', async () => {
    expect(keyCount('commit')).toBe(8);
    const call = runScript(redis, 'mutex-release', [keys.sweeperLock(), keys.sweeperLock()], { owner: 'w' });
    await expect(call).rejects.toBeInstanceOf(ScriptKeysError);
    await expect(call).rejects.toMatchObject({ code: 'SCRIPT_KEYS_MISMATCH' });
  });

  it('passes the options as one JSON argument that the script reads by name', async () => {
    const key = keys.sweeperLock();
    expect(Number(await runScript(redis, 'mutex-acquire', [key], { owner: 'w1', leaseMs: '10000' }))).toBe(1);
    expect(Number(await runScript(redis, 'mutex-acquire', [key], { owner: 'w2', leaseMs: '10000' }))).toBe(0);
    expect(await redis.get(key)).toBe('w1');
    expect(await redis.pttl(key)).toBeGreaterThan(9_000);
  });
});
