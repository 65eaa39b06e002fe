import { setTimeout as delay } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { eventBody, type Workload } from './workload';

export interface DriverStats {
  /** Logical sends (each planned send counts once, however often it was retried). */
  sends: number;
  /** HTTP requests to ingest, retries included: the arrivals the pipeline saw. */
  requests: number;
  retried: number;
  /** Answers by HTTP status, plus `error` for a connection failure or timeout. */
  answers: Record<string, number>;
  /** 202 `accepted` answers (exactly one per event is the contract's promise under no faults). */
  acceptedAnswers: number;
  duplicateAnswers: number;
  /** Events with at least one 2xx: the pipeline owes them their operations. */
  acknowledged: Set<number>;
  /** Events the producer sent at least once. */
  attempted: Set<number>;
  /** Sends that never got a 2xx within the producer's budget. */
  givenUp: number;
  /** 4xx other than 429: the producer's events are valid, so each is a finding. */
  refused: Array<{ event: number; status: number; body: string }>;
  /** When the last send finished (epoch ms). */
  finishedAt: number;
}

export interface DriveOptions {
  ingestUrl: string;
  workload: Workload;
  /** Epoch ms that `PlannedSend.atMs` counts from. */
  startAt: number;
  /** Sends in flight at once (retries included); later sends wait for a slot. */
  maxInFlight: number;
  /** How long one send keeps retrying before the producer gives up. */
  sendBudgetMs: number;
  /** Stops the producer early (the run's duration limit). */
  signal?: AbortSignal;
}

// timers/promises removes its abort listener when the timer fires (a hand-rolled one leaks a listener per sleep).
const sleep = (ms: number, signal?: AbortSignal) => delay(Math.max(0, ms), undefined, { signal }).catch(() => undefined);

/**
 * An at-least-once producer: every planned send is POSTed at its time and
 * retried on anything but a 2xx (503 while Redis is away, a refused or reset
 * connection while ingest is being restarted) until it is acknowledged or its
 * budget runs out. Retry timing uses Math.random: it depends on the faults'
 * timing anyway, so seeding it would not make it reproducible.
 */
export async function drive(options: DriveOptions): Promise<DriverStats> {
  const stats: DriverStats = {
    sends: 0,
    requests: 0,
    retried: 0,
    answers: {},
    acceptedAnswers: 0,
    duplicateAnswers: 0,
    acknowledged: new Set(),
    attempted: new Set(),
    givenUp: 0,
    refused: [],
    finishedAt: 0,
  };
  const agent = new Agent({ connections: options.maxInFlight, headersTimeout: 15_000, bodyTimeout: 15_000, connect: { timeout: 5_000 } });
  const url = `${options.ingestUrl}/v1/events`;
  const count = (answer: string) => (stats.answers[answer] = (stats.answers[answer] ?? 0) + 1);

  let inFlight = 0;
  const waiting: Array<() => void> = [];
  const acquire = async () => {
    while (inFlight >= options.maxInFlight) await new Promise<void>((r) => waiting.push(r));
    inFlight++;
  };
  const release = () => {
    inFlight--;
    waiting.shift()?.();
  };

  const produce = async (eventIndex: number, body: string) => {
    const deadline = Date.now() + options.sendBudgetMs;
    stats.attempted.add(eventIndex);
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) return;
      stats.requests++;
      if (attempt > 0) stats.retried++;
      try {
        const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent });
        const text = await res.body.text();
        count(String(res.statusCode));
        if (res.statusCode >= 200 && res.statusCode < 300) {
          stats.acknowledged.add(eventIndex);
          const status = (JSON.parse(text) as { status?: string }).status;
          if (status === 'accepted') stats.acceptedAnswers++;
          else stats.duplicateAnswers++;
          return;
        }
        if (res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429) {
          stats.refused.push({ event: eventIndex, status: res.statusCode, body: text.slice(0, 300) });
          return;
        }
      } catch {
        count('error');
      }
      if (Date.now() > deadline) {
        stats.givenUp++;
        return;
      }
      await sleep(Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random()), options.signal);
    }
  };

  const running: Promise<void>[] = [];
  try {
    for (const send of options.workload.sends) {
      await sleep(options.startAt + send.atMs - Date.now(), options.signal);
      if (options.signal?.aborted) break;
      await acquire();
      stats.sends++;
      const event = options.workload.events[send.event];
      if (!event) throw new RangeError(`send for unknown event ${send.event}`);
      running.push(produce(send.event, eventBody(event)).finally(release));
    }
    await Promise.all(running);
  } finally {
    stats.finishedAt = Date.now();
    await agent.close().catch(() => undefined);
  }
  return stats;
}
