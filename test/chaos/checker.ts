import type { ExpectedOperation } from './workload';

/** What Redis says about one operation (from its op hash). */
export interface OperationState {
  status: string;
  /** When the state last changed: for a terminal operation, when it became terminal. */
  updatedAt?: number;
  externalId?: string;
  reason?: string;
  /** Claims so far. */
  attempts?: number;
}

/** What the provider holds for one Idempotency-Key. */
export interface ProviderAcceptance {
  id: string;
  /** POSTs the provider accepted for this key: exactly 1 for a sent operation. */
  count: number;
  body: unknown;
}

export interface CheckInput {
  /** Operations of every acknowledged event: the pipeline owes each a terminal state. */
  expected: ReadonlyMap<string, ExpectedOperation>;
  /** Operations of events sent but never acknowledged: they may exist, but never twice. */
  unacknowledged: ReadonlyMap<string, ExpectedOperation>;
  /** Op-hash state of every key in `expected` and `unacknowledged` (null: no record). */
  states: ReadonlyMap<string, OperationState | null>;
  /** The provider's acceptances by Idempotency-Key. */
  accepted: ReadonlyMap<string, ProviderAcceptance>;
  /** Every Idempotency-Key the provider saw a POST for, with how many. */
  posted: ReadonlyMap<string, number>;
  /** Journal entries by type over all shards. */
  journal: Readonly<Record<string, number>>;
  /** Terminal journal entries (sent, dead, suppressed) by operation key. */
  terminalEntries: ReadonlyMap<string, ReadonlyArray<{ type: string; fence: string }>>;
  faultWindow: { from: number; to: number };
  /** Every operation must be terminal within this long after `faultWindow.to`. */
  boundMs: number;
}

export interface CheckReport {
  operations: number;
  /** Operations the provider refuses for good (must end dead). */
  rejected: number;
  sent: number;
  dead: number;
  suppressed: number;
  notTerminal: number;
  /** Provider acceptances beyond the one an operation may have. */
  duplicates: number;
  /** Operations that should have been sent and the provider does not have. */
  lost: number;
  /** Provider effects for keys no produced event makes. */
  unexpected: number;
  /** Dead operations are exactly the rejected ones. */
  deadIsExactlyRejected: boolean;
  /** Last terminal time minus the end of the faults (0 when all were terminal before). */
  slowestAfterFaultsMs: number;
  /** The operation that became terminal last, for a slow run's diagnosis. */
  slowest: string;
  /** Operations that became terminal while the faults ran. */
  terminalDuringFaults: number;
  violations: string[];
  /** Full keys of the first operations that broke a rule, for evidence. */
  suspects: string[];
}

const TERMINAL = new Set(['sent', 'dead', 'suppressed']);
const EXAMPLES = 5;

/**
 * The chaos checker. Stricter than Jepsen's queue checker, which tolerates
 * duplicates: for every operation key of every acknowledged event,
 * - the provider accepted it exactly once if it should be sent, never otherwise
 *   (a second accepted POST under the same key counts as a duplicate even
 *   though an idempotent provider would absorb it: a plain-SMTP provider would not);
 * - it is terminal, and `sent + dead + suppressed` = distinct operations;
 * - dead operations are exactly those whose recipient the provider rejects;
 * - the state's external id is the provider's id, the provider's body is this operation's;
 * - the journal holds one terminal entry per terminal operation;
 * - nothing reached the provider for a key no event makes;
 * - the last operation became terminal within `boundMs` of the faults stopping.
 * Pure: the run collects the inputs from Redis and the sink.
 */
export function checkRun(input: CheckInput): CheckReport {
  const problems = new Map<string, string[]>();
  const flag = (rule: string, example: string, key?: string) => {
    if (key && report.suspects.length < 10 && !report.suspects.includes(key)) report.suspects.push(key);
    const list = problems.get(rule) ?? [];
    list.push(example);
    problems.set(rule, list);
  };
  const report: CheckReport = {
    operations: input.expected.size,
    rejected: 0,
    sent: 0,
    dead: 0,
    suppressed: 0,
    notTerminal: 0,
    duplicates: 0,
    lost: 0,
    unexpected: 0,
    deadIsExactlyRejected: true,
    slowestAfterFaultsMs: 0,
    slowest: '',
    terminalDuringFaults: 0,
    violations: [],
    suspects: [],
  };
  let lastTerminalAt = 0;
  const statusCounts: Record<string, number> = {};

  const checkOne = (op: ExpectedOperation, owed: boolean) => {
    const state = input.states.get(op.key) ?? null;
    const acceptance = input.accepted.get(op.key);
    const effects = acceptance?.count ?? 0;
    const tag = `${op.key.slice(0, 12)}… (event ${op.event}, ${op.recipient})`;
    if (state) statusCounts[state.status] = (statusCounts[state.status] ?? 0) + 1;
    const entries = input.terminalEntries.get(op.key) ?? [];
    const terminalState = state && TERMINAL.has(state.status);
    if (entries.length > 1 || (terminalState && (entries.length !== 1 || entries[0]?.type !== state.status))) {
      flag(
        'the journal does not hold exactly one terminal entry matching the state',
        `${tag}: state ${state?.status ?? 'none'}, journal ${entries.map((e) => `${e.type}@fence ${e.fence}`).join(', ') || 'nothing'}`,
        op.key,
      );
    }
    if (acceptance) {
      const body = acceptance.body as { operationKey?: unknown; recipient?: unknown } | undefined;
      if (body?.operationKey !== op.key || body?.recipient !== op.recipient) flag('the provider got another operation\'s payload under this key', tag, op.key);
      if (state?.status === 'sent' && state.externalId !== acceptance.id) {
        flag('the recorded external id is not the provider\'s', `${tag}: ${state.externalId} ≠ ${acceptance.id}`, op.key);
      }
    }
    const shouldSend = !op.rejected && state?.status !== 'suppressed';
    const allowed = shouldSend ? 1 : 0;
    if (effects > allowed) {
      report.duplicates += effects - allowed;
      flag(shouldSend ? 'accepted by the provider more than once' : 'accepted by the provider although it must not be sent', `${tag}: ${effects}×`, op.key);
    }
    if (!owed) return;

    if (op.rejected) report.rejected++;
    if (!state) {
      report.lost++;
      flag('no operation record for an acknowledged event (lost)', tag, op.key);
      return;
    }
    if (!TERMINAL.has(state.status)) {
      report.notTerminal++;
      flag('not terminal', `${tag}: ${state.status}`, op.key);
    } else {
      if ((state.updatedAt ?? 0) > lastTerminalAt) {
        lastTerminalAt = state.updatedAt ?? 0;
        report.slowest = `${tag}: ${state.status} after ${state.attempts ?? '?'} claim(s)`;
      }
      if (state.updatedAt !== undefined && state.updatedAt >= input.faultWindow.from && state.updatedAt <= input.faultWindow.to) {
        report.terminalDuringFaults++;
      }
    }
    if (state.status === 'sent') report.sent++;
    if (state.status === 'dead') report.dead++;
    if (state.status === 'suppressed') {
      report.suppressed++;
      if (!state.reason) flag('suppressed without a reason', tag, op.key);
    }
    if (op.rejected && state.status !== 'dead' && state.status !== 'suppressed') {
      report.deadIsExactlyRejected = false;
      flag('rejected recipient did not end dead', `${tag}: ${state.status}`, op.key);
    }
    if (!op.rejected && state.status === 'dead') {
      report.deadIsExactlyRejected = false;
      flag('operation that should be sent ended dead', `${tag}: ${state.reason ?? 'no reason'}`, op.key);
    }
    if (shouldSend && effects === 0) {
      report.lost++;
      flag('should be sent, the provider does not have it (lost)', `${tag}: ${state.status}`, op.key);
    }
  };

  for (const op of input.expected.values()) checkOne(op, true);
  for (const op of input.unacknowledged.values()) checkOne(op, false);

  for (const [key, count] of input.posted) {
    if (input.expected.has(key) || input.unacknowledged.has(key)) continue;
    report.unexpected += input.accepted.get(key)?.count ?? 0;
    flag('the provider got a POST for a key no event makes', `${key.slice(0, 12)}…: ${count} POST(s)`, key);
  }

  const terminal = report.sent + report.dead + report.suppressed;
  if (terminal !== report.operations) flag('sent + dead + suppressed ≠ distinct operations', `${terminal} ≠ ${report.operations}`);
  for (const type of ['sent', 'dead', 'suppressed'] as const) {
    const journaled = input.journal[type] ?? 0;
    const held = statusCounts[type] ?? 0;
    if (journaled !== held) flag(`the journal's "${type}" entries differ from the operations in state "${type}"`, `${journaled} entries for ${held} operations`);
  }

  report.slowestAfterFaultsMs = Math.max(0, lastTerminalAt - input.faultWindow.to);
  if (report.slowestAfterFaultsMs > input.boundMs) {
    flag('not terminal within the bound after the faults stopped', `${report.slowestAfterFaultsMs} ms > ${input.boundMs} ms`);
  }

  for (const [rule, examples] of problems) {
    const more = examples.length > EXAMPLES ? ` (+${examples.length - EXAMPLES} more)` : '';
    report.violations.push(`${rule}: ${examples.length} — ${examples.slice(0, EXAMPLES).join('; ')}${more}`);
  }
  return report;
}
