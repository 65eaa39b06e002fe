import { checkRun, type CheckReport, type ProviderAcceptance } from '../chaos/checker';
import { readStates, scanJournal } from '../chaos/redis-reads';
import type { PartitionRun } from './partition-run';

/** What the printout shows of a run. */
export interface PartitionSummary {
  events: number;
  operations: number;
  shaping: string;
  victimClaimsAtCut: number;
  victimAnswersHeldAtCut: number;
  victimAnsweredDuringCut: number;
  /** Victim sends kept from the provider at the cut: their claims must be sent by the good process. */
  victimSendsNeverArrivedAtCut: number;
  /** The victim's `singleshot_stale_commits_total{queue="deliver"}`: its commits rejected by a later fence. */
  fencedCommits: number;
  /** The victim's `fence_superseded` log events (one per fenced commit). */
  fenceSupersededLogs: number;
  /** The victim's attempts that ended `stale` (fenced, or lease lost before any commit). */
  victimStaleAttempts: number;
  /** Claims held at the cut whose provider send was the victim's, recorded by the good worker's lookup. */
  heldSentByVictimRecordedElsewhere: number;
  /** Claims held at the cut that the good worker sent itself (the victim had not reached the provider). */
  heldSentByGood: number;
  sent: number;
  duplicates: number;
  lost: number;
  notTerminal: number;
  providerPosts: { victim: number; good: number };
  /** Provider calls of the victim for the second batch (it resumed). */
  victimPostsAfterHeal: number;
  cutToHealMs: number;
}

export interface PartitionVerdict {
  summary: PartitionSummary;
  check: CheckReport;
  violations: string[];
}

/**
 * Checks a finished run: the chaos checker's rules for every operation
 * (exactly one accepted POST for each, terminal, state and journal agree,
 * nothing lost), and for every claim the victim held at the cut, that the
 * operation ended through a later fence than the victim's: the victim's
 * commits were fenced off and the operation was completed elsewhere.
 */
export async function checkPartition(run: PartitionRun): Promise<PartitionVerdict> {
  const { rt, sink, proxies, apps } = run;
  const keys = [...run.operations.keys()];
  const states = await readStates(rt.redis, rt.keys, keys);
  const journal = await rt.journal.countByType();
  const scan = await scanJournal(rt.redis, rt.keys);
  const accepted = new Map<string, ProviderAcceptance>(sink.accepted);
  const posted = new Map<string, number>();
  for (const req of sink.requests) if (req.idempotencyKey) posted.set(req.idempotencyKey, (posted.get(req.idempotencyKey) ?? 0) + 1);
  const check = checkRun({
    expected: run.operations,
    unacknowledged: new Map(),
    states,
    accepted,
    posted,
    journal,
    terminalEntries: scan.terminal,
    faultWindow: { from: run.timing.cutAt, to: run.timing.healAt },
    // Not a timing check: the waits before the check are what bound the run.
    boundMs: Number.MAX_SAFE_INTEGER,
  });
  const violations = [...check.violations];

  const victimAccepted = new Set(proxies.victim.acceptedPosts().map((r) => r.key));
  const goodAccepted = new Set(proxies.good.acceptedPosts().map((r) => r.key));
  let byVictim = 0;
  let byGood = 0;
  for (const [key, victimFence] of run.heldAtCut) {
    const state = states.get(key);
    const entries = scan.terminal.get(key) ?? [];
    const tag = `${key.slice(0, 12)}… (victim fence ${victimFence})`;
    if (state?.status !== 'sent') violations.push(`held by the victim at the cut, not sent: ${tag}: ${state?.status ?? 'no record'}`);
    if (entries.length !== 1) violations.push(`held by the victim at the cut, ${entries.length} terminal journal entries: ${tag}`);
    for (const entry of entries) {
      if (!(Number(entry.fence) > Number(victimFence))) violations.push(`held by the victim at the cut, ended under fence ${entry.fence}, not a later one: ${tag}`);
    }
    if (victimAccepted.has(key) && !goodAccepted.has(key)) byVictim++;
    if (goodAccepted.has(key)) byGood++;
  }

  const fencedCommits = await apps.victim.metric('singleshot_stale_commits_total', { queue: 'deliver' });
  if (run.heldAtCut.size === 0) violations.push('the victim held no claim at the cut: the partition tested nothing');
  if (fencedCommits < 1) violations.push('no commit of the victim was fenced off');
  if (byGood < run.parkedAtCut) violations.push(`${run.parkedAtCut} victim sends never reached the provider at the cut, but the good process sent only ${byGood} of the held claims`);
  if (fencedCommits < run.answeredDuringCut) violations.push(`${run.answeredDuringCut} victim sends were answered during the cut, only ${fencedCommits} of its commits were fenced off`);
  if (run.victimPostsAfterHeal === 0) violations.push('the victim did not deliver anything of the second batch after the heal');
  for (const app of [apps.front, apps.victim, apps.good]) {
    if (app?.exitedEarly()) violations.push(`${app.name} exited on its own: ${app.tail().slice(-800)}`);
  }

  const summary: PartitionSummary = {
    events: run.events.length,
    operations: run.operations.size,
    shaping: run.shaping,
    victimClaimsAtCut: run.heldAtCut.size,
    victimAnswersHeldAtCut: run.answersHeldAtCut,
    victimAnsweredDuringCut: run.answeredDuringCut,
    victimSendsNeverArrivedAtCut: run.parkedAtCut,
    fencedCommits,
    fenceSupersededLogs: apps.victim.events.get('fence_superseded') ?? 0,
    victimStaleAttempts: await apps.victim.metric('singleshot_deliveries_total', { result: 'stale' }),
    heldSentByVictimRecordedElsewhere: byVictim,
    heldSentByGood: byGood,
    sent: check.sent,
    duplicates: check.duplicates,
    lost: check.lost,
    notTerminal: check.notTerminal,
    providerPosts: { victim: proxies.victim.requests.filter((r) => r.method === 'POST').length, good: proxies.good.requests.filter((r) => r.method === 'POST').length },
    victimPostsAfterHeal: run.victimPostsAfterHeal,
    cutToHealMs: run.timing.healAt - run.timing.cutAt,
  };
  return { summary, check, violations };
}
