import { startHttpSink, type HttpBehaviour, type HttpSink } from '@singleshot/test-harness';
import { prng } from './prng';

/** Misbehaviours the provider shows on its seeded schedule. */
export const SINK_FAULTS = ['503', 'accept-then-drop', 'hang', 'accept-then-hang', 'no-id'] as const;
export type SinkFault = (typeof SINK_FAULTS)[number];
export type SinkFaultCounts = Record<SinkFault | 'reject-422', number>;

export interface ChaosSinkOptions {
  seed: string;
  /** Recipients the provider always refuses with 422 (permanent): exactly these must end dead. */
  isRejected(recipient: string): boolean;
  /** Chance that the first POST of a key misbehaves; the second gets half of it, later ones none. */
  faultRate: number;
}

export interface ChaosSink {
  /** The underlying recording sink: `requests`, `accepted` (key → id, accepted POSTs), `lookups`. */
  readonly http: HttpSink;
  /** Misbehaviours actually served, by kind. */
  readonly faults: SinkFaultCounts;
  /** What the schedule answers to the `ordinal`-th POST (0-based) of `key`. Pure: same seed, same answer. */
  scheduled(key: string, ordinal: number): HttpBehaviour;
  close(): Promise<void>;
}

function behaviourOf(fault: SinkFault): HttpBehaviour {
  switch (fault) {
    case '503':
      return { status: 503, body: { error: 'provider overloaded' }, headers: { 'retry-after': '1' } };
    case 'accept-then-drop':
    case 'hang':
    case 'accept-then-hang':
    case 'no-id':
      return fault;
  }
}

const faultOf = (behaviour: HttpBehaviour): SinkFault | undefined => {
  if (typeof behaviour === 'object') return 'status' in behaviour && behaviour.status === 503 ? '503' : undefined;
  return (SINK_FAULTS as readonly string[]).includes(behaviour) ? (behaviour as SinkFault) : undefined;
};

/**
 * The provider of a chaos run: the harness's idempotent HTTP sink (one id per
 * Idempotency-Key, `GET /messages/:key` lookup, every POST recorded) driven by
 * a seeded schedule. A key's misbehaviour depends only on the seed, the key and
 * how many POSTs for that key came before, never on timing, so a run's provider
 * answers are reproducible while its interleaving is not.
 *
 * Faults are bounded per key (at most two misbehaving POSTs) so that a correct
 * pipeline with enough attempts ends every good operation `sent`: a good
 * operation that ends dead is then a finding, not bad luck.
 */
export async function startChaosSink(options: ChaosSinkOptions): Promise<ChaosSink> {
  const http = await startHttpSink();
  const faults: SinkFaultCounts = { '503': 0, 'accept-then-drop': 0, hang: 0, 'accept-then-hang': 0, 'no-id': 0, 'reject-422': 0 };
  const ordinals = new Map<string, number>();

  const scheduled = (key: string, ordinal: number): HttpBehaviour => {
    if (ordinal > 1) return 'ok';
    const rng = prng(options.seed, `sink:${key}:${ordinal}`);
    const rate = ordinal === 0 ? options.faultRate : options.faultRate / 2;
    return rng.chance(rate) ? behaviourOf(rng.pick(SINK_FAULTS)) : 'ok';
  };

  http.behave((req) => {
    const key = req.idempotencyKey as string;
    if (req.recipient !== undefined && options.isRejected(req.recipient)) {
      faults['reject-422']++;
      return { status: 422, body: { error: `recipient ${req.recipient} does not exist` } };
    }
    const ordinal = ordinals.get(key) ?? 0;
    ordinals.set(key, ordinal + 1);
    const behaviour = scheduled(key, ordinal);
    const fault = faultOf(behaviour);
    if (fault) faults[fault]++;
    return behaviour;
  });

  return { http, faults, scheduled, close: () => http.close() };
}
