import { replay as replayOperation, type ReplayDeps, type ReplayResult as LibraryReplayResult } from '@singleshot/queues';
import type { Logger } from '@singleshot/observability';

export type ReplayOutcome = LibraryReplayResult;
export type ReplayResult = LibraryReplayResult['result'];

/** Who asked for a replay; journaled with it. */
export interface ReplayActor {
  who: string;
  via: 'cli' | 'api' | 'dashboard';
}

/**
 * The one way the dashboard replays a dead (or suppressed) operation, from
 * the admin API and from the board's Retry button alike. The logic is the
 * queues library's `replay`, shared with `singleshot dlq replay`: it reuses the
 * operation key, journals `replayed` with who and how, and reports
 * `already_sent` (sending nothing) for one that was meanwhile sent.
 */
export type Replay = (operationKey: string, by: ReplayActor) => Promise<ReplayOutcome>;

/** Binds the library's replay to a runtime (it counts `singleshot_replays_total`), logging who asked. */
export function runtimeReplay(deps: ReplayDeps & { logger: Logger }): Replay {
  return async (operationKey, by) => {
    const outcome = await replayOperation(operationKey, { by: by.who, via: by.via }, deps);
    deps.logger.info({ event: 'replay_requested', operationKey, jobId: operationKey, who: by.who, via: by.via, result: outcome.result }, 'replay requested');
    return outcome;
  };
}
