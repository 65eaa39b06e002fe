import type { ChaosResult } from './run-chaos';

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function group(counts: Record<string, number>): string {
  const byHead = new Map<string, string[]>();
  for (const [kind, n] of Object.entries(counts).sort()) {
    const cut = kind.lastIndexOf(':');
    const head = cut < 0 ? kind : kind.slice(0, cut);
    const tail = cut < 0 ? '' : kind.slice(cut + 1);
    byHead.set(head, [...(byHead.get(head) ?? []), tail ? `${tail} ${n}` : String(n)]);
  }
  return [...byHead].map(([head, parts]) => `${head} ${parts.join(', ')}`).join('; ');
}

/** The figures of a run, as printed by `npm run chaos`. */
export function formatReport(r: ChaosResult): string {
  const c = r.check;
  const answers = Object.entries(r.driver.answers).sort().map(([k, n]) => `${k} ×${n}`).join(', ');
  const sinkFaults = Object.entries(r.sinkFaults).map(([k, n]) => `${k} ${n}`).join(', ');
  const faultTotal = Object.values(r.faults).reduce((a, b) => a + b, 0);
  return [
    `seed              ${r.seed}`,
    `redis             ${r.store === 'cluster' ? 'cluster: 3 masters + 3 replicas, a fault proxy per node, WAIT 1 replica' : 'one server, AOF appendfsync always, behind a fault proxy'}`,
    `events            ${r.events} (${r.driver.acknowledged} acknowledged), ${r.sends} sends (3–5 each, bursts and later)`,
    `arrivals          ${r.driver.requests} HTTP requests to ingest (${r.driver.retried} retries): ${answers}`,
    `                  202 accepted ${r.driver.acceptedAnswers}, 202 duplicate ${r.driver.duplicateAnswers}`,
    `operations        ${c.operations} distinct (${c.rejected} to a rejected recipient)`,
    `faults            ${faultTotal} injected: ${group(r.faults)}`,
    `provider faults   ${sinkFaults}`,
    `provider          ${r.providerPosts} POSTs, ${r.providerLookups} lookups`,
    `sent              ${c.sent}`,
    `dead              ${c.dead} (exactly the rejected ones: ${c.deadIsExactlyRejected ? 'yes' : 'NO'})`,
    `suppressed        ${c.suppressed}`,
    `not terminal      ${c.notTerminal}`,
    `duplicates        ${c.duplicates}`,
    `lost              ${c.lost}`,
    `unexpected        ${c.unexpected}`,
    `journal           ${Object.entries(r.journal).sort().map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `in doubt          ${Object.entries(r.inDoubt).sort().map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
    `slowest terminal  ${s(c.slowestAfterFaultsMs)} after the faults stopped (bound ${s(r.boundMs)})${c.slowest ? `: ${c.slowest}` : ''}`,
    `under faults      ${s(r.faultWindowMs)}: ${r.throughput.terminalPerSecond.toFixed(1)} operations/s terminal, ${r.throughput.arrivalsPerSecond.toFixed(1)} arrivals/s`,
    r.violations.length === 0 ? 'violations        none' : `violations        ${r.violations.length}:\n${r.violations.map((v) => `  - ${v}`).join('\n')}`,
  ].join('\n');
}
