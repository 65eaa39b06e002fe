import { isCluster, type RedisClient } from './connection';
import { runEach, type EachScriptName, type ScriptItem } from './scripts';
import { atWriteTurnEnd } from './write-batching';

/** The most items one script call carries: the call blocks Redis for all of them. */
export const ITEMS_PER_CALL_MAX = 64;

interface Pending<N extends EachScriptName> {
  item: ScriptItem<N>;
  resolve(reply: unknown): void;
  reject(err: unknown): void;
}

/**
 * Sends the calls of a script that takes items (EACH_SCRIPTS: claim,
 * commit, message-arrive, message-decided) asked for in one go as one script
 * call: the operations a deliver batch starts together, the claims that start
 * as the commits of one Redis reply free their slots, the commits of the
 * sends that ended together, the arrivals of the requests ingest read
 * together, the decisions of the decide jobs that ran together. Every
 * script call costs Redis its fixed work (the lookup, a reply) and the process
 * a command to encode and a reply to parse; several operations per call pay it
 * once. Each operation is still acted on alone (the script's function for one
 * item): one lock, one fence, one answer each.
 *
 * When: an item waits until what its connection writes in this turn of the
 * event loop goes out (write-batching.ts: the writes of a turn leave together,
 * in one syscall, at its end), and goes with it: no later than a call of its
 * own would have left. Without batched writes (a cluster client), it waits
 * only until the code running now and the promise callbacks it set off have
 * run (`process.nextTick`). Never a timer, never for I/O. On a Redis Cluster
 * one call holds only items of one shard (a script's keys must share a slot);
 * a single Redis takes them all in one call. A failed call fails each of its
 * items, as a failed call of its own would have: what the script did before
 * failing is what a call that went unanswered leaves (a claim `sending` under
 * its lease, which the next claim after it reconciles, docs/protocol.md
 * invariant 10; a commit that the holder's retry finds applied, invariant 4).
 */
export class ScriptBatch<N extends EachScriptName> {
  private groups = new Map<string, Array<Pending<N>>>();
  private scheduled = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly name: N,
  ) {}

  /**
   * Runs the script for one item in the next shared call; resolves with its
   * own answer (the script's output for it), rejects with its own error.
   * @param shard the item's shard (any key of it that names the shard): the group on a cluster
   */
  run(shard: string, item: ScriptItem<N>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const group = isCluster(this.redis) ? shard : '';
      let pending = this.groups.get(group);
      if (!pending) this.groups.set(group, (pending = []));
      pending.push({ item, resolve, reject });
      if (pending.length >= ITEMS_PER_CALL_MAX) {
        this.groups.delete(group);
        this.send(pending);
      } else if (!this.scheduled) {
        this.scheduled = true;
        if (!atWriteTurnEnd(this.redis, this.flush)) process.nextTick(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const groups = this.groups;
    this.groups = new Map();
    for (const pending of groups.values()) this.send(pending);
  };

  private send(pending: Array<Pending<N>>): void {
    runEach(this.redis, this.name, pending.map((p) => p.item)).then(
      (answers) => {
        pending.forEach((p, i) => {
          const answer = answers[i];
          if (answer instanceof Error) p.reject(answer);
          else if (answer === undefined) p.reject(new Error(`script ${this.name} gave fewer answers than it was given items`));
          else p.resolve(answer);
        });
      },
      (err: unknown) => {
        for (const p of pending) p.reject(err);
      },
    );
  }
}
