import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';

/**
 * Shared by the lifecycle acceptance tests (race, fan-out, send-at, quiet
 * hours): the operation key of an event's webhook notification, the
 * cancellation answer, and a small client for ingest's two routes.
 */
export const opOf = (source: string, id: string, recipient: string): string =>
  operationKey({ messageKey: eventMessageKey(source, id), action: parseAction('notify'), recipient, channel: 'webhook' });

/** What `POST /v1/cancellations` answers (docs/contract.md). */
export interface CancelAnswer {
  operations: Array<{ operationKey: string; recipient: string; channel: string; outcome: string }>;
  pending: boolean;
}

/** Statuses from which an operation never moves again. */
export const TERMINAL = new Set(['sent', 'cancelled', 'dead', 'suppressed']);

/** Posts events and cancels to one ingest; a non-2xx answer throws with its status and body. */
export function ingestClient(base: string): { event(body: Record<string, unknown>): Promise<void>; cancel(body: Record<string, unknown>): Promise<CancelAnswer> } {
  const post = async (path: string, body: unknown, expected: number): Promise<unknown> => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== expected) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as unknown;
  };
  return {
    event: async (body) => void (await post('/v1/events', body, 202)),
    cancel: async (body) => (await post('/v1/cancellations', body, 200)) as CancelAnswer,
  };
}

/** Counts of (answered outcome × final status), printed as a table. */
export function outcomeTable(rows: Array<{ answered: string; final: string }>): string {
  const answers = [...new Set(rows.map((r) => r.answered))].sort();
  const finals = [...new Set(rows.map((r) => r.final))].sort();
  const count = (a: string, f: string) => rows.filter((r) => r.answered === a && r.final === f).length;
  const width = Math.max(18, ...answers.map((a) => a.length + 2));
  const line = (cells: string[]) => cells[0]!.padEnd(width) + cells.slice(1).map((c) => c.padStart(11)).join('') + '\n';
  let out = line(['answered \\ final', ...finals, 'total']);
  for (const a of answers) out += line([a, ...finals.map((f) => String(count(a, f))), String(rows.filter((r) => r.answered === a).length)]);
  out += line(['total', ...finals.map((f) => String(rows.filter((r) => r.final === f).length)), String(rows.length)]);
  return out;
}
