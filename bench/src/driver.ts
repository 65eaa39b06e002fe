import { Pool } from 'undici';

/**
 * The load generator every system gets: N events, each for R recipients, each
 * posted K times in parallel to `POST /v1/events` (the at-least-once input).
 * Closed loop: `inFlight` requests at most, the next event as soon as one
 * finishes. Open loop: events start on a fixed schedule, never waiting for answers.
 */
export interface Workload {
  events: number;
  recipients: number;
  dup: number;
  inFlight: number;
}

export interface DriverResult {
  /** Event id → when its first copy left the driver (performance.now()). */
  firstSent: Map<string, number>;
  /** Event id → when its first 2xx answer came back (performance.now()): ingest's share of the latency. */
  firstAnswered: Map<string, number>;
  startedAt: number;
  sendSeconds: number;
  requests: number;
  retried: number;
  failed: number;
  accepted: number;
  duplicateAnswers: number;
}

export function eventBody(id: string, recipients: number): string {
  const to = Array.from({ length: recipients }, (_, i) => `r${i}-${id.slice(-3)}@bench.example`);
  return JSON.stringify({ id, source: 'bench', type: 'order.created', recipients: to, data: { benchEvent: id, orderId: id } });
}

export async function drive(
  ingestUrl: string,
  run: string,
  w: Workload,
  schedule?: { eventsPerSecond: number },
): Promise<DriverResult> {
  const pool = new Pool(ingestUrl, { connections: w.inFlight, pipelining: 1 });
  const r: DriverResult = { firstSent: new Map(), firstAnswered: new Map(), startedAt: performance.now(), sendSeconds: 0, requests: 0, retried: 0, failed: 0, accepted: 0, duplicateAnswers: 0 };
  const post = async (id: string, body: string): Promise<void> => {
    for (let attempt = 0; attempt < 8; attempt++) {
      r.requests++;
      try {
        const res = await pool.request({ method: 'POST', path: '/v1/events', headers: { 'content-type': 'application/json' }, body });
        const text = await res.body.text();
        if (res.statusCode >= 200 && res.statusCode < 300) {
          if (!r.firstAnswered.has(id)) r.firstAnswered.set(id, performance.now());
          if (text.includes('"accepted"')) r.accepted++;
          else r.duplicateAnswers++;
          return;
        }
        if (res.statusCode < 500 && res.statusCode !== 429) throw new Error(`ingest answered ${res.statusCode}: ${text}`);
      } catch (err) {
        if (attempt === 7) {
          r.failed++;
          return;
        }
        if (err instanceof Error && err.message.startsWith('ingest answered')) throw err;
      }
      r.retried++;
      await new Promise((res) => setTimeout(res, 50 * 2 ** attempt));
    }
  };
  const sendEvent = (index: number): Promise<unknown> => {
    const id = `b-${run}-${index}`;
    const body = eventBody(id, w.recipients);
    r.firstSent.set(id, performance.now());
    return Promise.all(Array.from({ length: w.dup }, () => post(id, body)));
  };
  if (!schedule) {
    let next = 0;
    const lanes = Math.max(1, Math.floor(w.inFlight / w.dup));
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (next < w.events) await sendEvent(next++);
      }),
    );
  } else {
    const pending: Promise<unknown>[] = [];
    const t0 = performance.now();
    for (let i = 0; i < w.events; i++) {
      const due = t0 + (i * 1000) / schedule.eventsPerSecond;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((res) => setTimeout(res, wait));
      pending.push(sendEvent(i));
    }
    await Promise.all(pending);
  }
  r.sendSeconds = (performance.now() - r.startedAt) / 1000;
  await pool.close();
  return r;
}
