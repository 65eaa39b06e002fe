import { describe, expect, it } from 'vitest';
import { ValidationError } from '@singleshot/core';
import { parseConfig } from '@singleshot/config';
import { resolveOptions } from './provider-options';

describe('provider options come from the config schema', () => {
  it('fills the schema defaults when a provider is built by hand', () => {
    const smtp = resolveOptions({ type: 'smtp', name: 'relay', host: '127.0.0.1', from: 'a@example.test' });
    expect(smtp.timeoutMs).toBe(30_000);
    expect(smtp.port).toBe(587);
    expect(smtp.requireTls).toBe(false);
    expect(resolveOptions({ type: 'http', name: 'h', url: 'http://127.0.0.1:1/send' }).timeoutMs).toBe(10_000);
  });

  it('takes requireTls from a config file entry', () => {
    const config = parseConfig(
      { providers: { email: [{ type: 'smtp', name: 'relay', host: '127.0.0.1', from: 'a@example.test', requireTls: true }] } },
      {},
    );
    const entry = config.providers.email?.[0];
    expect(entry?.type === 'smtp' && entry.requireTls).toBe(true);
  });

  it('rejects an unusable entry with INVALID_PROVIDER_CONFIG naming the path, not the value', () => {
    let caught: unknown;
    try {
      resolveOptions({ type: 'sendgrid', name: 's', from: 'a@example.test', apiKey: 'SG.secret', endpoint: 'ftp://x' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).code).toBe('INVALID_PROVIDER_CONFIG');
    expect((caught as Error).message).toContain('endpoint');
    expect((caught as Error).message).not.toContain('SG.secret');
  });
});
