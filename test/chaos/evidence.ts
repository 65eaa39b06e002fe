import type { Runtime } from '@singleshot/runtime';
import type { HttpSink } from '@singleshot/test-harness';

/**
 * Where an operation without an op hash got to upstream: the message record
 * (arrivals, queued, decided, the operation keys the decision recorded) and the
 * state of its decide job and its own deliver job (batched jobs have other ids).
 */
async function upstream(rt: Runtime, key: string, messageKey: string | undefined, t: (ms: number | undefined) => string): Promise<string[]> {
  const lines: string[] = [];
  const jobState = async (queue: { getJob(id: string): Promise<{ getState(): Promise<string> } | undefined> }, id: string) =>
    (await (await queue.getJob(id))?.getState()) ?? 'no job';
  if (messageKey) {
    const m = await rt.redis.hgetall(rt.keys.message(messageKey));
    const ops = Object.keys(m).filter((f) => /^[0-9a-f]{64}$/.test(f));
    const at = (field: string) => (m[field] ? t(Number(m[field])) : '-');
    lines.push(
      `  message ${messageKey.slice(0, 12)}…: ${Object.keys(m).length === 0 ? 'no record' : `first arrival ${at('firstArrivalAt')}, ${m.arrivals ?? '?'} arrival(s), queued ${at('queuedAt')}, decided ${at('decidedAt')}, ${ops.length} operation(s) recorded${ops.includes(key) ? ' (this one among them)' : ''}`}`,
    );
    lines.push(`  decide job ${messageKey.slice(0, 12)}…: ${await jobState(rt.queues.decideOf(messageKey), messageKey)}`);
  }
  lines.push(`  deliver job: ${await jobState(rt.queues.deliverOf(key), key)}`);
  return lines;
}

/**
 * What happened to one suspect operation, from both sides, as lines for a bug
 * report: every POST the provider got for its key (when, and what the schedule
 * answered), its op hash, its attempt history and its journal entries. Times
 * are seconds since the run's start, so they line up with the fault timeline.
 */
export async function gatherEvidence(rt: Runtime, sink: HttpSink, key: string, startAt: number, messageKey?: string): Promise<string[]> {
  const t = (ms: number | undefined) => (ms === undefined ? '?' : `+${((ms - startAt) / 1000).toFixed(3)}s`);
  const lines = [`operation ${key}`];
  for (const req of sink.requests) {
    if (req.idempotencyKey !== key) continue;
    const behaviour = typeof req.behaviour === 'string' ? req.behaviour : JSON.stringify(req.behaviour);
    lines.push(`  provider POST #${req.seq} at ${t(req.receivedAt)}: ${behaviour}`);
  }
  const lookups = sink.lookups.filter((l) => l.key === key).map((l) => (l.found ? 'found' : 'not found'));
  if (lookups.length > 0) lines.push(`  provider lookups (in order): ${lookups.join(', ')}`);
  const record = await rt.operations.get(key);
  if (!record) return [...lines, '  no op hash', ...(await upstream(rt, key, messageKey, t))];
  lines.push(
    `  op: ${record.status}, fence ${record.fence}, ${record.attempts} claim(s), created ${t(record.createdAt)}, updated ${t(record.updatedAt)}, externalId ${record.externalId ?? '-'}, reason ${record.reason ?? '-'}`,
  );
  for (const h of await rt.operations.history(key)) {
    lines.push(
      `  history ${t(h.at)} claim ${h.attempt} fence ${h.fence}: ${h.outcome}${h.provider ? ` via ${h.provider}` : ''}${h.errorCode ? ` ${h.errorCode}` : ''}${h.error ? ` (${h.error.slice(0, 120)})` : ''}${h.note ? ` — ${h.note}` : ''}${h.durationMs !== undefined ? ` in ${h.durationMs} ms` : ''}`,
    );
  }
  for (const e of await rt.journal.forOperation(key, record.journalIds)) {
    lines.push(`  journal ${t(e.ts)} ${e.type} fence ${e.fields.fence ?? '-'}${e.fields.err ? ` err ${e.fields.err}` : ''}`);
  }
  return lines;
}
