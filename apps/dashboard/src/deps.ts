import type { Logger } from '@singleshot/observability';
import type { Queues } from '@singleshot/queues';
import type { OperatorSuppressions } from '@singleshot/intake';
import type { DigestStore, DocumentStateStore, FeedbackStore, JournalReader, MessageStore, OperationStore, ScheduledIndex, SourceRow, SuppressionAuditEntry } from '@singleshot/store';
import type { Cancel } from './cancel';
import type { Replay } from './replay';
import type { TenantsAnswer } from './tenants-view';

/** What the admin API reads and does; narrow, so tests can hand in small pieces. */
export interface AdminApiDeps {
  operations: Pick<OperationStore, 'get' | 'history' | 'storedJob'>;
  messages: Pick<MessageStore, 'get' | 'tenantOf'>;
  journal: Pick<JournalReader, 'range' | 'forOperation'>;
  /** The DLQ (`dead`): records are listed and looked up, never consumed. */
  queues: Pick<Queues, 'dead'>;
  replay: Replay;
  /** Operations waiting for their documents, and the documents' state; none: `/waiting` answers 404. */
  documents?: Pick<DocumentStateStore, 'waiting' | 'get'>;
  /** Provider feedback per operation (docs/feedback.md); none: `feedback` is null. */
  feedback?: Pick<FeedbackStore, 'read'>;
  /** The configured sources with their last reports; none: `/sources` lists nothing. */
  sources?: { list(): Promise<SourceRow[]> };
  /** Scheduled operations, soonest first; none: `/scheduled` answers 404. */
  scheduled?: Pick<ScheduledIndex, 'soonest'>;
  /** Open digests, soonest close first, and how many are open; none: `/digests` and the digests page answer 404. */
  digests?: Pick<DigestStore, 'openDigests' | 'openCount'>;
  /** The tenants, their share and backlog; none: `/tenants` and the tenants page answer 404. */
  tenants?: { read(): Promise<TenantsAnswer> };
  /** An operator's cancel; none: `POST /cancellations` answers 404. */
  cancel?: Cancel;
  /** The suppression list and its audit; none: `/suppressions` answers 404. */
  suppressions?: {
    admin: Pick<OperatorSuppressions, 'add' | 'remove' | 'get' | 'list'>;
    audit(options: { limit: number; before?: string }): Promise<SuppressionAuditEntry[]>;
  };
  /** The configured routes (the story page names an operation's route by them). */
  routes?: ReadonlyArray<{ name: string; action: string; channel: string }>;
  logger: Logger;
}
