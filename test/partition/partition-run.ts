import type { Runtime } from '@singleshot/runtime';
import { freePort, startHttpSink, waitForQueuesIdle, waitUntil, writeConfigFile, type HttpSink } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { chaosConfig } from '../chaos/chaos-config';
import { countNotTerminal } from '../chaos/redis-reads';
import { eventBody, expectedOperations, type ChaosEvent, type ExpectedOperation } from '../chaos/workload';
import { clientsFrom } from './blocked-clients';
import { claimsHeldBy } from './claims';
import { NetnsLab, type Link } from './netns';
import { spawnInNamespace, startNsRedis, type NsApp, type NsRedis } from './ns-processes';
import { OriginProxy, type ProxiedRequest } from './origin-proxy';

/** Ingest's port inside its namespace (a fresh namespace has every port free). */
const INGEST_PORT = 18080;
/** How long the proxy keeps the provider's answer from the victim before the cut: claims held, sends done, commits not yet made. */
const VICTIM_HOLD_MS = 700;
/** Every n-th victim POST never reaches the provider (until the victim gives up on it): at the cut, some claims have no send. */
const VICTIM_PARK_EVERY = 4;
/** The same for the good process after the heal, so that the resumed victim gets a share of the second batch. */
const RESUME_GOOD_HOLD_MS = 300;

/** Everything a partition run leaves for the checks, and what it must close. */
export interface PartitionRun {
  lab: NetnsLab;
  redis: NsRedis;
  sink: HttpSink;
  proxies: { good: OriginProxy; victim: OriginProxy };
  apps: { front: NsApp; victim: NsApp; good?: NsApp };
  rt: Runtime;
  events: ChaosEvent[];
  operations: Map<string, ExpectedOperation>;
  /** Operation key → fence of every claim the victim held when its link was cut. */
  heldAtCut: Map<string, string>;
  /** Victim POSTs the provider had accepted and whose answer the proxy still held at the cut. */
  answersHeldAtCut: number;
  /** Victim POSTs the proxy kept from the provider at the cut (the victim still waiting on them). */
  parkedAtCut: number;
  /** Victim POSTs whose answer reached the victim while it could not reach Redis. */
  answeredDuringCut: number;
  shaping: string;
  /** Phase lines for the printout (`delay: 9 victim sends under tbf rate 64kbit …`). */
  phases: string[];
  timing: { cutAt: number; healAt: number };
  /** Provider calls the victim made for the second batch, after the heal. */
  victimPostsAfterHeal: number;
}

/** What `setUp` leaves running: the namespaces and links, Redis, the provider, the first processes. */
export interface PartitionSetup extends Pick<PartitionRun, 'lab' | 'redis' | 'sink' | 'proxies' | 'rt'> {
  apps: { front: NsApp; victim: NsApp };
  links: Record<'good' | 'victimRedis' | 'victimSink', Link>;
  /** Config of the processes in the good namespace (the good delivery process starts at the cut). */
  goodConfig: string;
}

/** The namespaces, links and processes; phases are run by `drive`. */
export async function setUp(closers: Array<() => unknown>, onLab: (lab: NetnsLab) => void = () => undefined): Promise<PartitionSetup> {
  const lab = new NetnsLab();
  onLab(lab);
  closers.push(() => lab.destroy());
  const front = lab.namespace('g');
  const island = lab.namespace('v');
  const links = { good: lab.link(front, 'g'), victimRedis: lab.link(island, 'v'), victimSink: lab.link(island, 's') };

  const redis = await startNsRedis(await freePort(), [links.good.rootAddress, links.victimRedis.rootAddress]);
  closers.push(() => redis.destroy());
  const sink = await startHttpSink();
  closers.push(() => sink.close());
  const proxies = {
    good: new OriginProxy('good', links.good.rootAddress, sink.port),
    victim: new OriginProxy('victim', links.victimSink.rootAddress, sink.port),
  };
  for (const proxy of Object.values(proxies)) {
    await proxy.listen();
    closers.push(() => proxy.close());
  }

  const configFor = (redisAddress: string, providerOrigin: string, metricsHost: string) => {
    const base = chaosConfig({ redis: { url: `redis://${redisAddress}:${redis.port}`, keyPrefix: 'ss' }, providerOrigin, ingestPort: INGEST_PORT });
    const written = writeConfigFile({
      ...base,
      ingest: { ...(base.ingest as object), host: links.good.innerAddress, allowAnonymous: true },
      // `start --only delivery` serves its metrics with decision's settings, the delivery app alone with its own.
      decision: { ...(base.decision as object), metricsHost },
      delivery: { ...(base.delivery as object), metricsHost },
    });
    closers.push(() => written.cleanup());
    return written.file;
  };
  const goodConfig = configFor(links.good.rootAddress, proxies.good.url, links.good.innerAddress);
  const victimConfig = configFor(links.victimRedis.rootAddress, proxies.victim.url, links.victimSink.innerAddress);

  const frontApp = spawnInNamespace('ingest+decision', front, 'ingest,decision', goodConfig);
  closers.push(() => frontApp.stop());
  // The victim's metrics listen on its provider-side address: readable while its Redis link is cut.
  const victim = spawnInNamespace('victim delivery', island, 'delivery', victimConfig, links.victimSink.innerAddress);
  closers.push(() => victim.stop());
  await Promise.all([frontApp.started(), victim.started()]);
  const ingestUrl = `http://${links.good.innerAddress}:${INGEST_PORT}`;
  await waitUntil(() => fetch(`${ingestUrl}/readyz`).then((r) => r.ok, () => false), 'ingest to be ready');

  // The test's reads go to Redis on loopback, never through a link.
  const rt = await testRuntime({ ...chaosConfig({ redis: { url: redis.localUrl, keyPrefix: 'ss' }, providerOrigin: proxies.good.url, ingestPort: 0 }), redis: { url: redis.localUrl, keyPrefix: 'ss', checkOnStart: false }, log: { level: 'silent' } }, 'partition-checker');
  closers.push(() => rt.close());
  return { lab, redis, sink, proxies, apps: { front: frontApp, victim }, rt, links, goodConfig };
}

/** Posts every event twice at once (an at-least-once producer), retrying anything but a 2xx. */
async function publish(ingestUrl: string, events: ChaosEvent[]): Promise<void> {
  const send = async (event: ChaosEvent) => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const res = await fetch(`${ingestUrl}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: eventBody(event) }).catch(() => undefined);
      await res?.text();
      if (res && res.status >= 200 && res.status < 300) return;
      if (res && res.status >= 400 && res.status < 500 && res.status !== 429) throw new Error(`ingest refused event ${event.id}: ${res.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`ingest never acknowledged event ${event.id}`);
  };
  await Promise.all(events.flatMap((e) => [send(e), send(e)]));
}

function makeEvents(from: number, count: number, tag: string): ChaosEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const index = from + i;
    return { index, id: `evt-netns-${tag}-${index}`, recipients: Array.from({ length: 1 + (index % 2) }, (_, j) => `u${index}-${j}@netns.test`) };
  });
}

const held = (r: ProxiedRequest) => r.method === 'POST' && r.providerAnsweredAt !== undefined && !r.answered;

/**
 * The phases: the victim delivers alone over a slowed link; its link to Redis
 * is cut while it holds claims whose sends are done; the good delivery
 * process takes over once the leases have run out and finishes everything;
 * the link heals and the victim's stale commits reach Redis; then a second
 * batch runs with both workers.
 */
export async function drive(base: PartitionSetup, closers: Array<() => unknown>): Promise<PartitionRun> {
  const { lab, links, proxies, rt, apps } = base;
  const ingestUrl = `http://${links.good.innerAddress}:${INGEST_PORT}`;
  const phases: string[] = [];
  const t0 = Date.now();
  const at = () => `+${((Date.now() - t0) / 1000).toFixed(1)}s`;
  // PARTITION_TRACE=1 shows each phase as it ends (vitest prints the test's output only at its end).
  const note = (line: string) => {
    phases.push(line);
    if (process.env.PARTITION_TRACE === '1') process.stderr.write(`[partition] ${line}\n`);
  };

  // Delay: the victim alone, its Redis link slowed, its provider answers held back.
  const shaping = lab.shape(links.victimRedis, { delayMs: 150, rateKbit: 128 });
  proxies.victim.holdAnswersMs = VICTIM_HOLD_MS;
  proxies.victim.parkEvery = VICTIM_PARK_EVERY;
  const first = makeEvents(0, 40, 'a');
  await publish(ingestUrl, first);
  await waitUntil(() => proxies.victim.acceptedPosts().length >= 10, 'the victim to send 10 operations over the slowed link', { timeoutMs: 90_000, intervalMs: 20 });
  await waitUntil(() => proxies.victim.requests.some(held) && proxies.victim.parkedWaiting().length > 0, 'a victim send accepted and not yet answered, and one kept from the provider', { timeoutMs: 30_000, intervalMs: 5 });
  note(`${at()} delay: victim sent ${proxies.victim.acceptedPosts().length} operations over its Redis link shaped with \`${shaping}\``);

  const blockingBeforeCut = Math.max(1, new Set((await clientsFrom(rt.redis, links.victimRedis.innerAddress)).filter((c) => c.cmd === 'bzpopmin').map((c) => c.id)).size);
  // Cut: both ends of the victim's Redis link down; its provider link stays up.
  lab.cut(links.victimRedis);
  const cutAt = Date.now();
  const answersHeldAtCut = proxies.victim.requests.filter(held).length;
  const parkedAtCut = proxies.victim.parkedWaiting().length;
  const heldAtCut = await claimsHeldBy(rt.redis, rt.keys, apps.victim.pid);
  lab.unshape(links.victimRedis);
  note(`${at()} cut: victim's Redis link down, holding ${heldAtCut.size} claims: ${answersHeldAtCut} sends accepted and unanswered, ${parkedAtCut} sends kept from the provider`);

  const good = spawnInNamespace('good delivery', links.good.ns, 'delivery', base.goodConfig, links.good.innerAddress);
  closers.push(() => good.stop());
  await good.started();
  const firstOps = [...expectedOperations(first).keys()];
  await waitUntil(async () => (await countNotTerminal(rt.redis, rt.keys, firstOps)) === 0, 'every first-batch operation to end while the victim is cut off', { timeoutMs: 120_000, intervalMs: 200 });
  const answeredDuringCut = proxies.victim.requests.filter((r) => r.method === 'POST' && (r.answeredAt ?? 0) >= cutAt).length;
  note(`${at()} takeover: good delivery ended all ${firstOps.length} first-batch operations; ${answeredDuringCut} victim sends answered during the cut`);

  // Heal: the victim's connections carry what it sent during the cut (TCP retransmits).
  lab.restore(links.victimRedis);
  const healAt = Date.now();
  const wantFenced = Math.max(1, answeredDuringCut);
  await waitUntil(async () => (await apps.victim.metric('singleshot_stale_commits_total', { queue: 'deliver' })) >= wantFenced, `the victim's ${wantFenced} stale commit(s) to be fenced off`, { timeoutMs: 120_000, intervalMs: 250 });
  note(`${at()} heal: link up; victim's stale commits fenced: ${await apps.victim.metric('singleshot_stale_commits_total', { queue: 'deliver' })}`);

  // Resume: the victim ready again, a second batch for both workers; the good
  // one's answers are held back a little so that the victim gets its share.
  await waitUntil(() => apps.victim.status('/readyz').then((s) => s === 200, () => false), 'the victim to be ready again after the heal', { timeoutMs: 60_000, intervalMs: 200 });
  // Ready answers on the victim's command connection; its workers' blocking
  // connections may still sit in TCP's retransmit backoff from the cut. The
  // second batch waits until each of them has begun a wait since the heal,
  // or the good process could take the whole batch first.
  const waiting = async () => (await clientsFrom(rt.redis, links.victimRedis.innerAddress)).filter((c) => c.cmd === 'bzpopmin');
  await waitUntil(async () => {
    const blocked = await waiting();
    return blocked.length >= blockingBeforeCut && blocked.every((c) => c.lastCommandAt > healAt);
  }, `the victim's ${blockingBeforeCut} worker connection(s) to wait on Redis again after the heal`, { timeoutMs: 90_000, intervalMs: 250 });
  note(`${at()} ready: the victim's ${(await waiting()).length} worker connection(s) wait on Redis again (${blockingBeforeCut} before the cut)`);
  proxies.victim.holdAnswersMs = 0;
  proxies.victim.parkEvery = 0;
  proxies.good.holdAnswersMs = RESUME_GOOD_HOLD_MS;
  const victimPostsBefore = proxies.victim.requests.length;
  const second = makeEvents(first.length, 30, 'b');
  await publish(ingestUrl, second);
  const events = [...first, ...second];
  const operations = expectedOperations(events);
  await waitUntil(async () => (await countNotTerminal(rt.redis, rt.keys, [...operations.keys()])) === 0, 'every operation to end after the heal', { timeoutMs: 120_000, intervalMs: 200 });
  // Redeliveries of finished operations still queued run now, so a late duplicate would be seen.
  await waitForQueuesIdle(rt.queues, { timeoutMs: 60_000, intervalMs: 250 });
  await new Promise((r) => setTimeout(r, 1000));
  const victimAfterHeal = proxies.victim.requests.slice(victimPostsBefore).filter((r) => r.method === 'POST').length;
  note(`${at()} resume: all ${operations.size} operations ended; the victim made ${victimAfterHeal} of the second batch's provider calls`);

  return { ...base, apps: { ...apps, good }, events, operations, heldAtCut, answersHeldAtCut, parkedAtCut, answeredDuringCut, shaping, phases, timing: { cutAt, healAt }, victimPostsAfterHeal: victimAfterHeal };
}
