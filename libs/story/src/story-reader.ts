import type { DeadJobData } from '@singleshot/queues';
import type { JournalReader, MessageStore, OperationReader } from '@singleshot/store';
import { buildStory } from './story';
import type { Story, StoryInput, StoryOperationInput } from './story-types';

/** The reads a story needs; the dashboard and the CLI hand in their stores. */
export interface StoryReaderDeps {
  operations: Pick<OperationReader, 'get' | 'history' | 'storedJob'>;
  messages: Pick<MessageStore, 'get'>;
  journal: Pick<JournalReader, 'forOperation'>;
  /** The operation's DLQ record (the `dead` queue's job of that id), null when none. */
  deadRecord(operationKey: string): Promise<DeadJobData | null>;
  /** The configured routes (to name the route of an operation that kept no job). */
  routes?: StoryInput['routes'];
}

/**
 * Reads everything the store keeps about a key and builds its story: a
 * message key tells its arrivals, decision and every operation; an operation
 * key tells its message's arrivals and decision and that operation alone.
 * Null when the store knows neither (past the retention, or never seen).
 */
export async function readStory(deps: StoryReaderDeps, key: string): Promise<Story | null> {
  const op = await deps.operations.get(key);
  const message = op ? (op.messageKey ? await deps.messages.get(op.messageKey) : null) : await deps.messages.get(key);
  if (!op && !message) return null;
  const keys = op ? [key] : (message?.operations ?? []);
  const operations = await Promise.all(keys.map((k) => readOperation(deps, k)));
  return buildStory({ key, message, operations, ...(deps.routes ? { routes: deps.routes } : {}) });
}

async function readOperation(deps: StoryReaderDeps, operationKey: string): Promise<StoryOperationInput> {
  const record = await deps.operations.get(operationKey);
  if (!record) return { operationKey, record: null, history: [], journal: [], job: undefined, dead: null };
  const [history, journal, job, dead] = await Promise.all([
    deps.operations.history(operationKey),
    deps.journal.forOperation(operationKey, record.journalIds),
    deps.operations.storedJob(operationKey),
    record.status === 'dead' ? deps.deadRecord(operationKey) : Promise.resolve(null),
  ]);
  return { operationKey, record, history, journal, job, dead };
}
