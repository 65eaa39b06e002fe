import { isCluster, type RedisClient } from './connection';
import { runEach, type ScriptItem } from './scripts';

/** The most claims one script call carries: the call blocks Redis for all of them. */
export const CLAIMS_PER_CALL_MAX = 64;

interface Pending {
  item: ScriptItem<'claim'>;
  resolve(reply: unknown): void;
  reject(err: unknown): void;
}

/**
 * Sends the claims asked for in one go as one `claim` script call: the
 * operations a deliver batch starts together, and those that start as the
 * commits of one Redis reply free their slots. Every script call costs Redis
 * its fixed work (the lookup, the options' decoding, a reply) and the process
 * a command to encode and a reply to parse; several operations per call pay it
 * once. Each operation is still claimed on its own (claim.lua): one lock, one
 * fence, one answer.
 *
 * When: a claim waits only until the code running now and the promise
 * callbacks it set off have run (`process.nextTick`), never for a timer or
 * for I/O; alone, it goes as it did in a call of its own. On a Redis Cluster
 * one call holds only operations of one shard (a script's keys must share a
 * slot); a single Redis takes them all in one call. A failed call fails each
 * of its claims, as a failed call of its own would have: what the script did
 * before failing is what a claim that went unanswered leaves, which the next
 * claim after the lease reconciles (docs/protocol.md, invariant 10).
 */
export class ClaimBatch {
  private groups = new Map<string, Pending[]>();
  private scheduled = false;

  constructor(private readonly redis: RedisClient) {}

  /**
   * Claims one operation in the next shared call; resolves with its own
   * answer (claim.lua's output), rejects with its own error.
   * @param shard the operation's shard (any key of it that names the shard): the group on a cluster
   */
  claim(shard: string, item: ScriptItem<'claim'>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const group = isCluster(this.redis) ? shard : '';
      let pending = this.groups.get(group);
      if (!pending) this.groups.set(group, (pending = []));
      pending.push({ item, resolve, reject });
      if (pending.length >= CLAIMS_PER_CALL_MAX) {
        this.groups.delete(group);
        this.send(pending);
      } else if (!this.scheduled) {
        this.scheduled = true;
        process.nextTick(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const groups = this.groups;
    this.groups = new Map();
    for (const pending of groups.values()) this.send(pending);
  };

  private send(pending: Pending[]): void {
    runEach(this.redis, 'claim', pending.map((p) => p.item)).then(
      (answers) => {
        pending.forEach((p, i) => {
          const answer = answers[i];
          if (answer instanceof Error) p.reject(answer);
          else if (answer === undefined) p.reject(new Error('claim script gave fewer answers than it was given operations'));
          else p.resolve(answer);
        });
      },
      (err: unknown) => {
        for (const p of pending) p.reject(err);
      },
    );
  }
}
