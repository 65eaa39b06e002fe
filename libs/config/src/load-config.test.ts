import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '@singleshot/core';
import { ConfigError, loadConfig, parseConfig, redactConfig } from './index';

const FIXTURE = resolve(__dirname, 'fixtures/contract-example.yaml');

function catchConfigError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

const minimalRoute = { name: 'r', action: 'notify', channel: 'log' };
const logProviders = { log: [{ type: 'log', name: 'log' }] };

describe('loadConfig', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ss-config-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts the example of docs/contract.md as it is', () => {
    const { config, source } = loadConfig({ file: FIXTURE, env: {} });
    expect(source).toBe(FIXTURE);
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.ingest).toMatchObject({ port: 8080, maxBodyBytes: 10485760, signingSecrets: [], apiKeys: [], allowAnonymous: false });
    expect(config.ingest.host).toBeUndefined();
    expect(config.routes.map((r) => [r.name, r.channel, r.recipients])).toEqual([
      ['orders', 'webhook', 'event'],
      // No recipients given: a notify_owner action goes to the mailbox's owner.
      ['support-mail', 'email', 'owner'],
    ]);
    expect(config.routes[0]?.match).toEqual({ source: 'shop', type: 'order.created' });
    expect(config.providers.webhook?.[0]).toEqual({
      type: 'http',
      name: 'primary',
      url: 'http://127.0.0.1:9100/send',
      lookupUrl: 'http://127.0.0.1:9100/messages',
      timeoutMs: 2000,
    });
    expect(config.providers.email?.[0]).toMatchObject({ type: 'smtp', port: 2525, secure: false, timeoutMs: 30000 });
    expect(config.mailboxes[0]?.imap).toMatchObject({ host: '127.0.0.1', port: 10143, password: 'secret', idle: true });
    expect(config.delivery).toMatchObject({ leaseMs: 30000, attempts: 5, backoffMs: [1000, 5000, 20000], inDoubtPolicy: 'resend' });
    expect(config.limits.perRecipient).toEqual({ max: 20, windowSeconds: 3600 });
    expect(config.retention.days).toBe(7);
  });

  it('uses the built-in defaults when there is no file', () => {
    const { config, source } = loadConfig({ env: {}, cwd: dir });
    expect(source).toBe('defaults');
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', keyPrefix: 'ss', shards: 16, checkOnStart: true });
    expect(config.log.level).toBe('info');
    expect(config.dashboard).toEqual({ port: 3000, host: '127.0.0.1', allowAnonymous: false, tokenPath: '.singleshot/dashboard-token', allowedOrigins: [] });
    expect(config.decision).toEqual({ concurrency: 16, metricsPort: 9464, metricsHost: '127.0.0.1' });
    expect(config.delivery.metricsHost).toBe('127.0.0.1');
    expect(config.delivery.metricsPort).toBe(9465);
    expect(config.providers).toEqual({ log: [{ type: 'log', name: 'log', path: './.singleshot/notifications.ndjson' }] });
    expect(config.routes.map((r) => [r.name, r.action, r.recipients])).toEqual([
      ['default-mail', 'notify_owner:v1', 'owner'],
      ['default-events', 'notify', 'event'],
    ]);
    expect(config.routes[1]?.template.subject).toBe('{{type}} from {{source}}');
  });

  it('finds ./singleshot.config.yaml, and SINGLESHOT_CONFIG (JSON) wins over it', () => {
    writeFileSync(join(dir, 'singleshot.config.yaml'), 'ingest:\n  port: 8181\n');
    expect(loadConfig({ env: {}, cwd: dir }).config.ingest.port).toBe(8181);

    writeFileSync(join(dir, 'other.json'), JSON.stringify({ ingest: { port: 8282 } }));
    const loaded = loadConfig({ env: { SINGLESHOT_CONFIG: 'other.json' }, cwd: dir });
    expect(loaded.source).toBe(join(dir, 'other.json'));
    expect(loaded.config.ingest.port).toBe(8282);
    // A file replaces the built-in routes rather than merging with them.
    expect(loaded.config.routes).toEqual([]);
  });

  it('reports a missing named file instead of falling back to defaults', () => {
    const err = catchConfigError(() => loadConfig({ file: 'nope.yaml', env: {}, cwd: dir }));
    expect(err.issues).toEqual([{ path: '', message: 'cannot read config file (ENOENT)' }]);
  });

  it('reports every problem by path, at once', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      [
        'redis:',
        '  shards: 0',
        'ingest:',
        '  prot: 8080',
        'providers:',
        '  webhook:',
        '    - { type: http, name: primary, url: not-a-url }',
      ].join('\n'),
    );
    const err = catchConfigError(() => loadConfig({ file, env: {} }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.code).toBe('INVALID_CONFIG');
    expect(err.issues.map((i) => i.path).sort()).toEqual(['ingest.prot', 'providers.webhook[0].url', 'redis.shards']);
    expect(err.issues).toContainEqual({ path: 'providers.webhook[0].url', message: 'Invalid URL' });
    expect(err.issues).toContainEqual({ path: 'ingest.prot', message: 'unknown key' });
    const lines = err.message.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe(`invalid config (${file}): 3 problems`);
    for (const issue of err.issues) expect(err.message).toContain(`${issue.path}: ${issue.message}`);
  });

  it('reports a route on an unknown channel at routes[i].channel, together with schema problems', () => {
    const err = catchConfigError(() =>
      parseConfig({ routes: [{ ...minimalRoute, channel: 'sms' }], providers: logProviders, delivery: { leaseMs: 10 } }),
    );
    expect(err.issues.map((i) => i.path).sort()).toEqual(['delivery.leaseMs', 'routes[0].channel']);
    expect(err.issues.find((i) => i.path === 'routes[0].channel')?.message).toContain('unknown channel "sms"');
  });

  it('checks cross-field rules: unique names, known mailbox, valid action and regexes', () => {
    const err = catchConfigError(() =>
      parseConfig({
        routes: [
          { ...minimalRoute, match: { mailbox: 'nope', subject: '(' } },
          { ...minimalRoute, action: 'notify:latest', match: { headers: { 'X-Spam': '[' } } },
        ],
        providers: {
          log: [
            { type: 'log', name: 'a' },
            { type: 'log', name: 'a' },
          ],
          email: [{ type: 'smtp', name: 'relay', host: 'h', from: 'not-an-address' }],
          fax: [{ type: 'fax', name: 'f' }],
          empty: [],
        },
        mailboxes: [
          { id: 'm', owner: 'o@example.test' },
          { id: 'm', owner: 'o@example.test', imap: { host: 'h', user: 'u' } },
        ],
      }),
    );
    expect(err.issues.map((i) => i.path).sort()).toEqual(
      [
        'mailboxes[1].id',
        'mailboxes[1].imap.password',
        'providers.email[0].from',
        'providers.empty',
        'providers.fax[0].type',
        'providers.log[1].name',
        'routes[0].match.mailbox',
        'routes[0].match.subject',
        'routes[1].action',
        'routes[1].match.headers.X-Spam',
        'routes[1].name',
      ].sort(),
    );
  });

  it('applies environment overrides and says where a bad value came from', () => {
    const env = {
      REDIS_URL: 'rediss://cache.internal:6380',
      PORT: '9090',
      DASHBOARD_PORT: '9091',
      LOG_LEVEL: 'debug',
      METRICS_PORT: '0',
      METRICS_HOST: '0.0.0.0',
    };
    const { config } = loadConfig({ file: FIXTURE, env });
    expect(config.redis.url).toBe('rediss://cache.internal:6380');
    expect(config.ingest.port).toBe(9090);
    expect(config.dashboard.port).toBe(9091);
    expect(config.log.level).toBe('debug');
    expect(config.decision.metricsPort).toBe(0);
    expect(config.delivery.metricsPort).toBe(0);
    expect(config.decision.metricsHost).toBe('0.0.0.0');
    expect(config.delivery.metricsHost).toBe('0.0.0.0');

    const err = catchConfigError(() => parseConfig({}, { PORT: 'eighty', LOG_LEVEL: 'loud' }));
    expect(err.issues.map((i) => i.path).sort()).toEqual(['ingest.port', 'log.level']);
    expect(err.issues.find((i) => i.path === 'ingest.port')?.message).toContain('PORT');
    expect(err.issues.find((i) => i.path === 'log.level')?.message).toContain('LOG_LEVEL');
  });

  it('reads <key>File secrets relative to the config file, trimmed', () => {
    writeFileSync(join(dir, 'imap.pass'), '  s3cret-imap\n');
    writeFileSync(join(dir, 'signing'), 'one\n\n two \n');
    const file = join(dir, 'c.yaml');
    writeFileSync(
      file,
      [
        'ingest: { signingSecretsFile: signing }',
        'mailboxes:',
        '  - id: support',
        '    owner: owner@example.test',
        '    imap: { host: 127.0.0.1, user: u, passwordFile: imap.pass }',
      ].join('\n'),
    );
    const { config } = loadConfig({ file, env: {}, cwd: '/' });
    expect(config.mailboxes[0]?.imap?.password).toBe('s3cret-imap');
    expect(config.mailboxes[0]?.imap?.passwordFile).toBe('imap.pass');
    expect(config.ingest.signingSecrets).toEqual(['one', 'two']);
  });

  it('reports unreadable or conflicting secret files without their contents', () => {
    writeFileSync(join(dir, 'token'), 'tok-value');
    const err = catchConfigError(() =>
      parseConfig(
        {
          redis: { password: 'inline-secret', passwordFile: 'token' },
          mailboxes: [{ id: 'm', owner: 'o@example.test', imap: { host: 'h', user: 'u', passwordFile: 'missing' } }],
        },
        {},
        { baseDir: dir },
      ),
    );
    expect(err.issues.map((i) => i.path).sort()).toEqual(['mailboxes[0].imap.passwordFile', 'redis.passwordFile']);
    expect(err.issues.find((i) => i.path === 'mailboxes[0].imap.passwordFile')?.message).toContain('ENOENT');
    expect(err.message).not.toContain('inline-secret');
    expect(err.message).not.toContain('tok-value');
  });

  it('keeps secrets out of parse errors', () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{"redis": {"password": hunter2-secret}}');
    const err = catchConfigError(() => loadConfig({ file, env: {} }));
    expect(err.issues[0]?.message).toMatch(/^invalid JSON/);
    expect(err.message).not.toContain('hunter2');

    const yamlFile = join(dir, 'broken.yaml');
    writeFileSync(yamlFile, 'redis:\n  password: "hunter2-secret\n');
    const yamlErr = catchConfigError(() => loadConfig({ file: yamlFile, env: {} }));
    expect(yamlErr.issues[0]?.message).toMatch(/^invalid YAML/);
    expect(yamlErr.message).not.toContain('hunter2');
  });
});

describe('source credentials', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ss-source-secrets-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const rabbit = { type: 'rabbitmq', name: 'q', source: 'shop', queue: 'orders' };

  it('reads a source url from urlFile, and a NATS token or password from their files', () => {
    writeFileSync(join(dir, 'amqp-url'), 'amqp://relay:s3cret@broker:5672\n');
    writeFileSync(join(dir, 'nats-token'), 'tok\n');
    const config = parseConfig(
      { sources: [{ ...rabbit, urlFile: 'amqp-url' }, { type: 'nats', name: 'n', source: 'shop', servers: ['nats://h:4222'], stream: 'S', tokenFile: 'nats-token' }] },
      {},
      { baseDir: dir },
    );
    const [q, n] = config.sources;
    expect(q?.type === 'rabbitmq' && q.url).toBe('amqp://relay:s3cret@broker:5672');
    expect(n?.type === 'nats' && n.token).toBe('tok');
    // What an operator may print never shows them.
    expect(JSON.stringify(redactConfig(config))).not.toMatch(/s3cret|"tok"/);
  });

  it('refuses url with urlFile, a NATS user without a password, and a token with a user', () => {
    writeFileSync(join(dir, 'amqp-url'), 'amqp://broker');
    const err = catchConfigError(() =>
      parseConfig(
        {
          sources: [
            { ...rabbit, url: 'amqp://broker', urlFile: 'amqp-url' },
            { type: 'nats', name: 'n1', source: 'shop', servers: ['nats://h:4222'], stream: 'S', user: 'u' },
            { type: 'nats', name: 'n2', source: 'shop', servers: ['nats://h:4222'], stream: 'S', user: 'u', password: 'p', token: 't' },
          ],
        },
        {},
        { baseDir: dir },
      ),
    );
    expect(err.issues.map((i) => i.path).sort()).toEqual(['sources[0].urlFile', 'sources[1].password', 'sources[2].token']);
  });
});

describe('redactConfig', () => {
  it('replaces every secret and leaves the rest and the original alone', () => {
    const config = parseConfig({
      redis: { url: 'redis://app:redis-pass@127.0.0.1:6379/0', password: 'redis-pass' },
      ingest: { signingSecrets: ['sig-1', 'sig-2'] },
      dashboard: { auth: { username: 'admin', password: 'dash-pass', token: 'dash-token' } },
      providers: {
        webhook: [{ type: 'http', name: 'p', url: 'https://api.example.test/send', headers: { Authorization: 'Bearer abc', 'X-Tenant': 't1' } }],
        email: [{ type: 'smtp', name: 's', host: 'smtp', user: 'u', password: 'smtp-pass', from: 'a@example.test' }],
      },
      mailboxes: [{ id: 'm', owner: 'o@example.test', imap: { host: 'h', user: 'u', password: 'imap-pass' } }],
    });
    const redacted = redactConfig(config);
    const text = JSON.stringify(redacted);
    for (const secret of ['redis-pass', 'sig-1', 'sig-2', 'dash-pass', 'dash-token', 'Bearer abc', 'smtp-pass', 'imap-pass']) {
      expect(text).not.toContain(secret);
    }
    expect(redacted.redis.url).toBe('redis://app:[redacted]@127.0.0.1:6379/0');
    expect(redacted.ingest.signingSecrets).toEqual(['[redacted]', '[redacted]']);
    expect(redacted.dashboard.auth).toEqual({ username: 'admin', password: '[redacted]', token: '[redacted]' });
    expect(redacted.providers.webhook?.[0]).toMatchObject({ url: 'https://api.example.test/send', headers: { Authorization: '[redacted]', 'X-Tenant': 't1' } });
    expect(redacted.mailboxes[0]?.imap).toMatchObject({ user: 'u', password: '[redacted]', host: 'h' });
    // A copy: the live config keeps its secrets.
    expect(config.mailboxes[0]?.imap?.password).toBe('imap-pass');
    expect(config.redis.url).toContain('redis-pass');
  });
});
