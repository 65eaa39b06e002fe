import type { Logger, Metrics } from '@singleshot/observability';
import type { AcceptDeps } from './accept';

/** What the ingest routes need; built once by `startIngest`, small in tests. */
export interface IngestContext {
  accept: AcceptDeps;
  logger: Logger;
  metrics: Pick<Metrics, 'eventsReceived' | 'duplicatesSuppressed' | 'fingerprintFallbacks' | 'ingestRequestDuration'>;
  mailboxIds: Set<string>;
  signingSecrets: readonly string[];
  maxBodyBytes: number;
  maxMailBytes: number;
  /**
   * Maps a producer's `source` to a bounded metric label: sources named in
   * routes keep their name, anything else is `other` (labels must stay bounded).
   */
  sourceLabel(source: string): string;
}
