import { ValidationError } from '@singleshot/core';
import { formatPath, providerSchema, type ProviderConfig } from '@singleshot/config';
import type { ProviderOptions } from './provider';

/**
 * Fills a provider entry's defaults from the one place they are written (the
 * config schema) and rejects options no send could work with, as
 * ValidationError code INVALID_PROVIDER_CONFIG, so a bad entry stops the
 * process at start instead of filling the DLQ. Parsing an entry the config
 * loader already validated is idempotent.
 */
export function resolveOptions<T extends ProviderConfig['type']>(options: ProviderOptions & { type: T }): Extract<ProviderConfig, { type: T }> {
  const parsed = providerSchema.safeParse(options);
  if (!parsed.success) {
    const name = typeof options.name === 'string' ? options.name : '(unnamed)';
    // Paths and rules only, never the values (a secret may be among them).
    const issues = parsed.error.issues.map((i) => `${formatPath(i.path) || '(root)'}: ${i.message}`);
    throw new ValidationError(`provider ${name}: ${issues.join('; ')}`, { issues }, 'INVALID_PROVIDER_CONFIG');
  }
  return parsed.data as Extract<ProviderConfig, { type: T }>;
}
