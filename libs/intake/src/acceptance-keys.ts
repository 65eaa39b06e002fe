import { partitionOf } from '@singleshot/core';
import type { KeyBuilder } from '@singleshot/store';

/**
 * The keys an acceptance writes whose slots a replica wait must cover: the
 * message record and the partition of its decide queue.
 */
export function acceptanceKeys(keys: KeyBuilder, messageKey: string): string[] {
  return [keys.message(messageKey), keys.queuePrefixOf(partitionOf(messageKey, keys.partitions))];
}
