import type { Logger, Metrics } from '@singleshot/observability';
import type { Runtime } from '@singleshot/runtime';
import type { Acceptor, CancelPort } from '@singleshot/intake';
import type { IngestCounters } from './counters';
import type { ProducerAuth } from './producer-auth';
import type { TenantBacklog } from './tenant-backlog';

/** What the ingest routes need; built once by `startIngest`, small in tests. */
export interface IngestContext {
  /** Takes arrivals (one per process: it coalesces parallel arrivals of a message). */
  accept: Acceptor;
  logger: Logger;
  metrics: Pick<Metrics, 'eventsReceived' | 'duplicatesSuppressed' | 'fingerprintFallbacks' | 'ingestRequestDuration' | 'ingestRequests' | 'cancellations'>;
  /** The per-request metrics above through cached label children (the hot path uses these). */
  counters: IngestCounters;
  mailboxIds: Set<string>;
  /** Each mailbox's tenant (its config's `tenant`), by mailbox id; a mailbox not here is the default tenant's. */
  mailboxTenants: ReadonlyMap<string, string>;
  /** Producer authentication (API keys, HMAC signature, or anonymous on loopback). */
  auth: ProducerAuth;
  limits: { maxRequestsInFlight: number; maxJsonDepth: number };
  maxBodyBytes: number;
  maxMailBytes: number;
  /** How far ahead an event may be scheduled (`scheduling.maxHorizonDays`), ms. */
  maxHorizonMs: number;
  /** Tenants' `maxPending`; absent when no tenant has one. */
  backlog?: TenantBacklog;
  /** `POST /v1/cancellations`; absent in tests of the event door alone. */
  cancels?: CancelPort;
  /**
   * Maps a producer's `source` to a bounded metric label: sources named in
   * routes keep their name, anything else is `other` (labels must stay bounded).
   */
  sourceLabel(source: string): string;
}

/**
 * What ingest takes from the runtime: no operation store, journal or worker
 * queues (ingest only accepts messages and enqueues decide jobs).
 */
export type IngestRuntime = Pick<Runtime, 'config' | 'logger' | 'metrics' | 'keys' | 'redis' | 'producer' | 'producerQueues' | 'retentionMs' | 'replicaWaits' | 'documentStore'>;
