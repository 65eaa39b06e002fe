import type { DeadJobData } from '@singleshot/queues';
import type { AttemptRecord, JournalEntry, MessageRecord, OperationRecord } from '@singleshot/store';

/** What the story of one key is built from: the store's records, read by story-reader.ts. */
export interface StoryInput {
  /** The key asked for (a message or an operation key). */
  key: string;
  message: MessageRecord | null;
  operations: StoryOperationInput[];
  /**
   * The configured routes: an operation whose deliver job is gone (a sent
   * one keeps none) is matched to the route whose action and channel make
   * its key. A route changed since is not found ('?').
   */
  routes?: ReadonlyArray<{ name: string; action: string; channel: string }>;
}

/** One operation's records. */
export interface StoryOperationInput {
  operationKey: string;
  /** Null: decided but not claimed yet (no state). */
  record: OperationRecord | null;
  history: AttemptRecord[];
  journal: JournalEntry[];
  /** The deliver job kept at the first claim (its route and `trace`), unvalidated. */
  job: unknown;
  /** Its DLQ record while it is dead (a replay removes it; the journal keeps the `dead` entry). */
  dead: DeadJobData | null;
}

/** What an event on the story's time axis stands for. */
export type StoryEventKind =
  | 'arrival'
  | 'queued'
  | 'decided'
  | 'claim'
  | 'attempt'
  | 'in_doubt'
  | 'reconcile'
  | 'sent'
  | 'dead'
  | 'dlq'
  | 'replayed'
  | 'suppressed'
  | 'journal';

/** One step of the story. */
export interface StoryEvent {
  /** Epoch ms. */
  at: number;
  kind: StoryEventKind;
  /** The operation it belongs to; absent for the message's own steps. */
  operationKey?: string;
  /** One line: what happened. */
  title: string;
  /** Further facts (provider, fence, error), already as text. */
  detail: Record<string, string>;
}

/** An operation at a glance (the story's table). */
export interface StoryOperation {
  operationKey: string;
  status: string;
  recipient: string;
  channel: string;
  route: string;
  provider: string;
  externalId: string;
  fence: string;
  attempts: number;
  replays: number;
}

/** The whole story of a message or operation key, on one time axis. */
export interface Story {
  key: string;
  /** What the key named. */
  kind: 'message' | 'operation';
  messageKey: string | undefined;
  /** The trace of the decision (from the deliver jobs' `trace`), when it was traced. */
  traceId: string | undefined;
  routes: string[];
  operations: StoryOperation[];
  /** Oldest first; steps of the same instant in the order they happen. */
  events: StoryEvent[];
}
