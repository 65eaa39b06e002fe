import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { LAYOUT_VERSION, Suppressions, createRedis } from '@singleshot/store';
import { waitUntil, type AppProcess } from '@singleshot/test-harness';
import { prng, type Prng } from '../chaos/prng';
import { layoutLab, readyz, type LayoutLab } from './support/layout';
import { TERMINAL, type CancelAnswer } from './support/lifecycle';

// A rolling update as an orchestrator does it, which takes no orders about
// which process goes first: a fleet of this build (two fronts, two delivery
// processes) is replaced one process at a time, in a seeded random order, by a
// copy at the next layout (nextLayoutCopy), while producers post events, cancel
// some of them and recipients bounce. The first process of the copy migrates
// every shard; from then on an old delivery process refuses its claims and
// commits (the job goes back untouched) and says so (metric, /readyz). Old
// processes are restarted before the migration, new ones after it. What must
// hold whatever the order: nothing sent twice, nothing accepted lost, no
// cancelled or suppressed operation sent, every answer to a cancel kept, and
// nothing posted after the migration claimed by the old build.
const SEED = process.env.LAYOUT_ROLL_SEED ?? String(Date.now());
/** Events in flight at once (each: post, sometimes a cancel, a pause). */
const PRODUCERS = 6;
/** The load runs until the roll is over, and never past this many events. */
const MAX_EVENTS = 5000;
const BOUNCERS = Array.from({ length: 4 }, (_, i) => `bouncer-${i}@example.com`);

const opOf = (id: string, recipient: string) => operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient, channel: 'webhook' });

interface Posted {
  id: string;
  recipient: string;
  op: string;
  postedAt: number;
  cancel?: CancelAnswer;
}

type Role = 'ingest,decision' | 'delivery';
interface Member {
  name: string;
  role: Role;
  build: 'old' | 'new';
  proc: AppProcess;
}

describe('a rolling update to the next layout under load, in random order', () => {
  let lab: LayoutLab;

  beforeAll(async () => {
    // Reminders come due during the roll.
    lab = await layoutLab({ reminderDelay: '2s', timeoutMs: 1500 });
    // Mostly quick answers, some slow ones, so that processes are stopped and
    // layouts change while calls are under way; all well inside the lease.
    const delays = prng(SEED, 'sink');
    lab.sink.behave(() => ({ delayMs: delays.chance(0.1) ? delays.int(100, 400) : delays.int(0, 20), then: 'ok' }));
  });

  afterAll(async () => {
    await lab?.close();
  });

  it('nothing sent twice, nothing lost, no cancelled or suppressed operation sent; the old processes stop claiming', { timeout: 300_000 }, async () => {
    const { admin, keys, sink } = lab;
    const fleet: Member[] = [];
    const join = async (name: string, role: Role, build: 'old' | 'new') => {
      const member = { name, role, build, proc: lab.spawn(role, build === 'new' ? 'next' : 'this') };
      await member.proc.metricsPort();
      fleet.push(member);
      return member;
    };
    await Promise.all([join('front-a', 'ingest,decision', 'old'), join('front-b', 'ingest,decision', 'old'), join('delivery-a', 'delivery', 'old'), join('delivery-b', 'delivery', 'old')]);

    // The load balancer: a request goes to a live front; a refused connection
    // or an answer other than the expected one is tried again on another.
    const routing = prng(SEED, 'routing');
    let retried = 0;
    let upgradeAnswers = 0;
    const send = async (path: string, body: unknown, expected: number): Promise<unknown> => {
      for (let tries = 0; tries < 400; tries++) {
        const fronts = fleet.filter((m) => m.role === 'ingest,decision');
        const front = routing.pick(fronts);
        try {
          const res = await fetch(`http://127.0.0.1:${await front.proc.metricsPort()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
          const text = await res.text();
          if (res.status === expected) return JSON.parse(text) as unknown;
          if (text.includes('UPGRADE_REQUIRED')) upgradeAnswers++;
          if (res.status < 500 && res.status !== 429) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
        } catch (err) {
          if (err instanceof Error && err.message.startsWith('POST ')) throw err;
        }
        retried++;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`POST ${path}: no front took it`);
    };

    const posted: Posted[] = [];
    const bouncedAt = new Map<string, number>();
    let rollDone = false;
    let next = 0;
    const producer = async (rand: Prng) => {
      while (!rollDone && next < MAX_EVENTS) {
        const n = next++;
        const id = `roll-${n}`;
        const recipient = rand.chance(0.05) ? rand.pick(BOUNCERS) : `r-${n}@example.com`;
        const type = rand.chance(0.2) ? 'order.reminder' : 'order.created';
        const event: Posted = { id, recipient, op: opOf(id, recipient), postedAt: Date.now() };
        await send('/v1/events', { id, source: 'shop', type, recipients: [recipient], data: {} }, 202);
        posted.push(event);
        if (rand.chance(0.15)) {
          await new Promise((r) => setTimeout(r, rand.int(0, 50)));
          event.cancel = (await send('/v1/cancellations', { source: 'shop', id, reason: 'changed their mind' }, 200)) as CancelAnswer;
        }
        await new Promise((r) => setTimeout(r, rand.int(20, 100)));
      }
    };
    const load = Promise.all(Array.from({ length: PRODUCERS }, (_, p) => producer(prng(SEED, `producer-${p}`))));

    const plan = prng(SEED, 'roll');
    const pause = () => new Promise((r) => setTimeout(r, plan.int(300, 1500)));
    const store = createRedis({ url: lab.redis.url, role: 'client' });
    const suppressions = new Suppressions(store, keys, { retentionMs: 86_400_000 });
    const bounce = async () => {
      const recipient = BOUNCERS[bouncedAt.size];
      if (!recipient) return;
      await suppressions.add({ channel: 'webhook', recipient, reason: 'bounce', origin: 'operator', by: 'test' });
      bouncedAt.set(recipient, Date.now());
    };
    // SIGTERM as an orchestrator sends it, or SIGKILL as a node that died.
    const gone: Member[] = [];
    const stop = async (member: Member) => {
      fleet.splice(fleet.indexOf(member), 1);
      gone.push(member);
      if (plan.chance(0.5)) member.proc.signal('SIGTERM');
      await member.proc.stop();
    };
    const restarts: string[] = [];
    const restart = async (member: Member) => {
      await stop(member);
      await join(member.name, member.role, member.build);
      restarts.push(`${member.build} ${member.name}`);
    };

    await pause();
    await bounce();
    // Before the migration, an old process restarted is an old process again.
    await restart(plan.pick(fleet));
    await pause();

    const order = plan.shuffle(fleet.map((m) => m.name));
    const migrated = async () => (await Promise.all(keys.allLayouts().map((k) => admin.get(k)))).every((v) => v === String(LAYOUT_VERSION + 1));
    let migratedAt = 0;
    const oldSeen: Array<{ name: string; metric: number; readyz: number; check: string | undefined }> = [];
    for (const name of order) {
      const old = fleet.find((m) => m.name === name) as Member;
      // The replacement first: the fleet never has fewer members of a role.
      await join(name, old.role, 'new');
      if (!migratedAt) {
        await waitUntil(migrated, 'every shard migrated by the first process of the copy');
        migratedAt = Date.now();
      }
      if (old.role === 'delivery') {
        // Under load, an old delivery process meets the new layout at its next claim or commit.
        const metric = await waitUntil(async () => (await old.proc.metric('singleshot_layout_upgrade_required')) || undefined, `the old ${name} to meet the new layout`, { timeoutMs: 30_000 });
        const ready = await readyz(old.proc);
        oldSeen.push({ name, metric, readyz: ready.status, check: ready.body.checks?.layout });
      }
      await pause();
      await stop(old);
      await bounce();
    }
    // After the migration, a new process restarted is a new process, and an old one refuses to start.
    await restart(plan.pick(fleet.filter((m) => m.build === 'new')));
    const refused = lab.spawn(plan.pick(['ingest,decision', 'delivery'] as const));
    const refusedCode = await refused.exited();
    await pause();
    rollDone = true;
    await load;
    store.disconnect();

    const statuses = new Map<string, Record<string, string>>();
    await waitUntil(
      async () => {
        const open = posted.filter((p) => !TERMINAL.has(statuses.get(p.op)?.status ?? ''));
        const read = await Promise.all(open.map(async (p) => [p.op, await admin.hgetall(keys.op(p.op))] as const));
        for (const [op, hash] of read) statuses.set(op, hash);
        const left = read.filter(([, h]) => !TERMINAL.has(h.status ?? ''));
        if (left.length > 0) throw new Error(`${left.length} not terminal, e.g. ${JSON.stringify(left.slice(0, 2))}`);
        return true;
      },
      'every accepted operation to end',
      { timeoutMs: 120_000, intervalMs: 250 },
    );

    const problems: string[] = [];
    const tally = { sent: 0, cancelled: 0, suppressed: 0, other: 0, claimedByNew: 0, postedAfterMigration: 0 };
    for (const p of posted) {
      const hash = statuses.get(p.op) as Record<string, string>;
      const final = hash.status as string;
      const accepted = sink.accepted.get(p.op)?.count ?? 0;
      const calls = sink.countFor(p.op);
      const bad = (why: string) => problems.push(`${p.id} (${p.recipient}) final ${final}, accepted ${accepted}, calls ${calls}, cancel ${JSON.stringify(p.cancel?.operations[0]?.outcome ?? p.cancel?.pending)}: ${why}`);
      if (final === 'sent' || final === 'cancelled' || final === 'suppressed') tally[final]++;
      else tally.other++;
      if (accepted > 1) bad('sent more than once');
      if (final === 'sent' && accepted !== 1) bad('sent but not at the sink exactly once');
      if ((final === 'cancelled' || final === 'suppressed') && accepted > 0) bad('ended without a send, yet at the sink');
      if (final !== 'sent' && final !== 'cancelled' && final !== 'suppressed') bad('lost: ended neither sent, cancelled nor suppressed');
      const bounced = bouncedAt.get(p.recipient);
      if (bounced !== undefined && p.postedAt > bounced && ((final !== 'suppressed' && final !== 'cancelled') || calls > 0)) bad('posted after its recipient bounced, yet it went on');
      if (p.cancel) {
        const answered = p.cancel.pending ? 'pending' : (p.cancel.operations.find((o) => o.operationKey === p.op)?.outcome ?? 'missing');
        if ((answered === 'cancelled' || answered === 'pending') && !(final === 'cancelled' || (final === 'suppressed' && calls === 0))) bad('answered cancelled, yet it went on');
        if ((answered === 'cancelled' || answered === 'pending') && calls > 0) bad('answered cancelled, yet the provider was called');
        if (answered === 'already_sent' && (final !== 'sent' || accepted !== 1)) bad('answered already sent, yet not sent once');
        if (answered === 'missing') bad('the answer did not list the operation');
      }
      if (p.postedAt > migratedAt) {
        tally.postedAfterMigration++;
        if (hash.claimedUnder === String(LAYOUT_VERSION + 1)) tally.claimedByNew++;
        else if (final === 'sent') bad('posted after the migration, yet claimed by the old build');
      }
    }

    const upgradeRequired = [...fleet, ...gone].reduce((n, { proc: p }) => n + p.logs.filter((l) => l.event === 'layout_upgrade_required').length, 0);
    console.warn(
      JSON.stringify({
        figures: 'layout rolling update',
        seed: SEED,
        order,
        replaced: order.length,
        restarts,
        events: posted.length,
        cancels: posted.filter((p) => p.cancel).length,
        bounced: bouncedAt.size,
        ...tally,
        oldDeliveriesStopped: oldSeen,
        upgradeRequiredLogLines: upgradeRequired,
        upgradeRequiredAnswers: upgradeAnswers,
        retriedRequests: retried,
        oldRestartExit: refusedCode,
        duplicates: posted.filter((p) => (sink.accepted.get(p.op)?.count ?? 0) > 1).length,
        lost: tally.other,
        cancelledOrSuppressedSent: posted.filter((p) => ['cancelled', 'suppressed'].includes(statuses.get(p.op)?.status ?? '') && sink.countFor(p.op) > 0).length,
      }),
    );
    expect(problems).toEqual([]);
    expect(order.length).toBe(4);
    expect(migratedAt).toBeGreaterThan(0);
    // At least one old delivery process outlived the first replacement, and every one that did stopped claiming, visibly.
    expect(oldSeen.length).toBeGreaterThan(0);
    // The layout it met: the new one, or the mark of the migration under way when its claim came.
    for (const seen of oldSeen) {
      expect(seen, seen.name).toMatchObject({ metric: 1, readyz: 503 });
      expect([`upgrade required: Redis holds layout ${LAYOUT_VERSION + 1}`, `upgrade required: Redis holds layout migrating:${LAYOUT_VERSION + 1}`], seen.name).toContain(seen.check);
    }
    expect(refusedCode).toBe(2);
    expect(tally.postedAfterMigration).toBeGreaterThan(0);
  });
});
