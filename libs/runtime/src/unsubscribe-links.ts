import { signUnsubscribeToken } from '@singleshot/core';
import type { UnsubscribeConfig } from '@singleshot/config';
import type { KeyBuilder, RedisClient } from '@singleshot/store';
import { readOnce, unsubscribeSecret } from './shared-secrets';

/** What one email's one-click unsubscribe is for. */
export interface UnsubscribeTarget {
  recipient: string;
  channel: string;
  category: string;
}

/** Builds the `List-Unsubscribe` URIs of one email (see ListUnsubscribe in @singleshot/providers). */
export interface UnsubscribeLinks {
  link(target: UnsubscribeTarget): Promise<{ url: string; mailto?: string }>;
}

/**
 * The unsubscribe links of `config` (docs/preferences.md), or undefined
 * without `publicBaseUrl`: then no email carries the header. The secret is
 * read once per process (from the config, else Redis); every link after the
 * first costs one HMAC, no round trip.
 */
export function unsubscribeLinks(deps: { redis: RedisClient; keys: KeyBuilder; config: UnsubscribeConfig; now?: () => number }): UnsubscribeLinks | undefined {
  const { config } = deps;
  if (!config.publicBaseUrl) return undefined;
  const base = `${config.publicBaseUrl.replace(/\/+$/, '')}/v1/unsubscribe/`;
  const ttlMs = config.ttlDays * 86_400_000;
  const now = deps.now ?? Date.now;
  const secret = readOnce(() => unsubscribeSecret(deps.redis, deps.keys, config.secret));
  return {
    async link(target) {
      const token = signUnsubscribeToken({ ...target, exp: now() + ttlMs }, await secret());
      return { url: base + token, ...(config.mailto ? { mailto: config.mailto } : {}) };
    },
  };
}
