import { Router } from 'express';
import { z } from 'zod';
import type { AdminApiDeps } from '../deps';
import { ApiError } from '../errors';
import { readStory } from '@singleshot/story';
import { hexKeySchema, parseInput } from '../params';
import { storyDeps } from './story';

const keyParams = z.strictObject({ key: hexKeySchema });

/**
 * "What happened to this notification?": an operation with its attempts and
 * journal entries (and its DLQ record when dead), or a message with every
 * operation it fanned out to.
 */
export function lookupRoutes(deps: AdminApiDeps): Router {
  const router = Router();

  router.get('/operations/:key', async (req, res) => {
    const { key } = parseInput(keyParams, req.params, 'path');
    const operation = await deps.operations.get(key);
    if (!operation) {
      throw new ApiError(404, 'NOT_FOUND', `no operation ${key} (records are kept for the retention period; an operation appears once a delivery worker claims it)`);
    }
    const [history, journal, deadJob, feedback] = await Promise.all([
      deps.operations.history(key),
      deps.journal.forOperation(key, operation.journalIds),
      operation.status === 'dead' ? deps.queues.dead.getJob(key) : Promise.resolve(undefined),
      deps.feedback ? deps.feedback.read(key) : Promise.resolve(undefined),
    ]);
    res.json({ operation, history, journal, dead: deadJob?.data ?? null, feedback: feedback ?? null });
  });

  router.get('/messages/:key', async (req, res) => {
    const { key } = parseInput(keyParams, req.params, 'path');
    const message = await deps.messages.get(key);
    if (!message) throw new ApiError(404, 'NOT_FOUND', `no message ${key} (records are kept for the retention period)`);
    const operations = await Promise.all(
      message.operations.map(async (operationKey) => {
        const record = await deps.operations.get(operationKey);
        // Decided but not yet claimed by a delivery worker: the deliver job is queued.
        return record ?? { operationKey, status: 'unclaimed' as const };
      }),
    );
    res.json({ message, operations });
  });

  // The story page's data: every step of a message or operation on one time axis.
  router.get('/story/:key', async (req, res) => {
    const { key } = parseInput(keyParams, req.params, 'path');
    const story = await readStory(storyDeps(deps), key);
    if (!story) throw new ApiError(404, 'NOT_FOUND', `no message or operation ${key} (records are kept for the retention period)`);
    res.json(story);
  });

  return router;
}
