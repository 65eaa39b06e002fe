import type { Queue } from 'bullmq';
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '@singleshot/observability';
import { QUEUES, listDead, type Queues } from '@singleshot/queues';
import { principalOf } from './auth';
import { hexKeySchema } from './params';
import type { Replay, ReplayResult } from './replay';

export interface BoardGuardDeps {
  /** The board's queues (decide, deliver, dead, and digest closes when wired). */
  queues: Pick<Queues, 'decideAll' | 'deliverAll' | 'dead'> & Partial<Pick<Queues, 'digest'>>;
  replay: Replay;
  logger: Logger;
}

const OURS = new Set<string>(Object.values(QUEUES));
/** Most dead records one "retry all" replays; the rest wait for the next click. */
const RETRY_ALL_MAX = 10_000;

/** Error body the board's UI shows as a toast (`error` is the title, `message` the text). */
function refuse(res: Response, status: number, title: string, message: string): void {
  res.status(status).json({ error: title, message });
}

const REFUSAL: Record<Exclude<ReplayResult, 'replayed'>, [number, string, string]> = {
  already_sent: [409, 'Already sent', 'This operation was already sent; nothing was sent again.'],
  not_replayable: [409, 'Not dead', 'This operation is still in progress; only dead or suppressed operations are replayed.'],
  not_found: [404, 'Not found', 'No such operation (or it is past the retention period).'],
};

/**
 * Express middleware mounted in front of Bull Board. The board has no hook
 * into our journal, so the actions that change what gets sent are taken over
 * here:
 *
 * - Retry (one job or all) on the DLQ becomes a replay through the queues
 *   library: the same operation key, journaled with who did it, refused with
 *   a message when the operation was meanwhile sent.
 * - Retry or promote of a deliver job replays it when its operation is dead;
 *   otherwise the board re-runs the same job (same key, so the claim keeps it
 *   exactly once). A batch job (its id is not an operation key) is re-run as
 *   it is: each of its operations claims again, a dead one stays dead (replay
 *   it from the DLQ, which is keyed by operation). Decide jobs go to the board as they are.
 * - Removing records (clean, empty, obliterate) and forging or editing jobs
 *   (add, update data) are refused on our queues: they would lose a dead
 *   operation or send something no route decided. Cleaning completed jobs
 *   (housekeeping) stays allowed.
 *
 * Every other change through the board is logged with who did it.
 */
export function boardGuard(deps: BoardGuardDeps): Router {
  const router = Router();
  // Partition queues are named `decide-07`, `deliver-07` (plain names with one partition).
  // A digest's close job is its only way to its flush: removing one that has not completed would strand the digest.
  const byName = new Map<string, Queue>(
    [...deps.queues.decideAll, ...deps.queues.deliverAll, deps.queues.dead, ...(deps.queues.digest ? [deps.queues.digest] : [])].map((q) => [q.name, q]),
  );
  const baseOf = (req: Request) => {
    const name = String(req.params.queueName);
    if (!byName.has(name)) return undefined;
    return OURS.has(name) ? name : name.replace(/-\d+$/, '');
  };
  const ours = (req: Request) => baseOf(req) !== undefined;

  router.use((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.path.startsWith('/api/')) {
      deps.logger.info({ event: 'board_action', who: principalOf(res).who, via: 'dashboard', method: req.method, path: req.path }, 'board action');
    }
    next();
  });

  const replayFromBoard = async (req: Request, res: Response, next: NextFunction, onlyIfDead: boolean): Promise<void> => {
    const jobId = String(req.params.jobId);
    if (!hexKeySchema.safeParse(jobId).success) {
      if (onlyIfDead) return next();
      return refuse(res, 400, 'Invalid job id', `${jobId} is not an operation key`);
    }
    const { result } = await deps.replay(jobId, { who: principalOf(res).who, via: 'dashboard' });
    if (result === 'replayed') {
      res.status(204).json({});
      return;
    }
    if (onlyIfDead && (result === 'not_replayable' || result === 'not_found')) return next();
    const [status, title, message] = REFUSAL[result];
    refuse(res, status, title, message);
  };

  const forbidden = (what: string) => (req: Request, res: Response, next: NextFunction) => {
    if (!ours(req)) return next();
    refuse(res, 403, 'Not allowed on singleshot queues', `${what} would lose or forge notifications; use the admin API or the CLI (singleshot dlq …).`);
  };

  router.put('/api/queues/:queueName/retry/:queueStatus', async (req, res, next) => {
    if (req.params.queueName !== QUEUES.dead) return next();
    const records = await listDead(deps.queues, { limit: RETRY_ALL_MAX });
    let retried = 0;
    for (const record of records) {
      const { result } = await deps.replay(record.operationKey, { who: principalOf(res).who, via: 'dashboard' });
      if (result === 'replayed') retried += 1;
    }
    res.status(200).json({ retried, skipped: records.length - retried });
  });

  router.put('/api/queues/:queueName/clean/:queueStatus', (req, res, next) => {
    if (req.params.queueName !== QUEUES.dead && req.params.queueStatus === 'completed') return next();
    forbidden('Cleaning jobs that are not completed')(req, res, next);
  });
  router.put('/api/queues/:queueName/empty', forbidden('Emptying a queue'));
  router.put('/api/queues/:queueName/obliterate', forbidden('Obliterating a queue'));
  router.post('/api/queues/:queueName/add', forbidden('Adding a job by hand'));
  router.patch('/api/queues/:queueName/:jobId/update-data', forbidden('Editing job data'));

  for (const action of ['retry', 'promote'] as const) {
    router.put(`/api/queues/:queueName/:jobId/${action}`, async (req, res, next) => {
      if (req.params.queueName === QUEUES.dead) return replayFromBoard(req, res, next, false);
      if (baseOf(req) === QUEUES.deliver) return replayFromBoard(req, res, next, true);
      next();
    });
  }

  router.put('/api/queues/:queueName/:jobId/clean', async (req, res, next) => {
    if (!ours(req)) return next();
    const name = String(req.params.queueName);
    const queue = name === QUEUES.dead ? undefined : byName.get(name);
    const state = queue ? await (await queue.getJob(String(req.params.jobId)))?.getState() : undefined;
    if (state === 'completed') return next();
    forbidden('Removing a job that is not completed')(req, res, next);
  });

  return router;
}
