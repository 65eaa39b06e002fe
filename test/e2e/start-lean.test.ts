import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, REPO_ROOT, startTestRedis, testConfig, writeConfigFile, type TestRedis } from '@singleshot/test-harness';

// A process of `singleshot start` loads the code of the apps it runs and of
// the providers it is configured with, nothing else: the CLI bundle holds every
// app and SDK (mjml alone is 16 MB of heap), and a worker that loaded them all
// had twice the heap, so twice the marking in every major GC and 60 MB more RSS.
// A probe `--require`d into the process lists the npm packages it loaded when it exits.
const PROBE = `process.on('exit', () => {
  const names = new Set();
  for (const file of Object.keys(require.cache)) {
    const at = file.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const parts = file.slice(at + 13).split('/');
    names.add(parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0]);
  }
  require('node:fs').writeFileSync(process.env.PROBE_OUT, [...names].join('\\n'));
});`;

describe('singleshot start loads only what its apps use', () => {
  let redis: TestRedis;
  let dir: string;
  let config: { file: string; cleanup(): void };

  beforeAll(async () => {
    redis = await startTestRedis();
    dir = mkdtempSync(join(tmpdir(), 'singleshot-lean-'));
    writeFileSync(join(dir, 'probe.cjs'), PROBE);
    config = writeConfigFile({
      ...testConfig({
        redisUrl: redis.url,
        routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order', text: 'Order' } }],
        providers: { webhook: [{ name: 'primary', type: 'http', url: 'http://127.0.0.1:9/hook' }] },
      }),
      log: { level: 'info' },
    });
  });

  afterAll(async () => {
    config?.cleanup();
    rmSync(dir, { recursive: true, force: true });
    await redis?.destroy();
  });

  /** Starts `start --only <apps> --processes 1`, stops it once it logged `singleshot_started`, returns the packages it loaded. */
  async function packagesOf(apps: string, env: Record<string, string> = {}): Promise<string[]> {
    const out = join(dir, `${apps}${Object.keys(env).length ? '-env' : ''}.txt`);
    // No OTEL_* of the environment running the tests: tracing is what `env` says.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
    const child = spawn(process.execPath, ['--require', join(dir, 'probe.cjs'), CLI_MAIN, 'start', '--only', apps, '--processes', '1', '--config', config.file], {
      cwd: REPO_ROOT,
      env: { ...inherited, PROBE_OUT: out, METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let log = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('"event":"singleshot_started"')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`start --only ${apps} exited with ${code} before it started:\n${log}`)));
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    return readFileSync(out, 'utf8').split('\n');
  }

  // Packages only other apps, or providers and document stores this config does not use, need.
  const HEAVY = ['mjml', 'pdfkit', 'twilio', '@aws-sdk/client-s3', '@aws-sdk/client-sesv2', 'imapflow', 'mailparser', 'express', '@bull-board/express'];

  it('tracing off loads no OpenTelemetry SDK; on, the SDK loads', async () => {
    // The API alone comes with prom-client (its exemplars), traced or not: it is not the SDK.
    const otel = (names: string[]) => names.filter((name) => name.startsWith('@opentelemetry/') && name !== '@opentelemetry/api').sort();
    expect(otel(await packagesOf('delivery'))).toEqual([]);
    // An endpoint nothing listens on: the exporter's failures are its own, the process starts all the same.
    const on = otel(await packagesOf('delivery', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }));
    expect(on).toEqual(expect.arrayContaining(['@opentelemetry/context-async-hooks', '@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http']));
  });

  it('a delivery process loads none of the other apps or unused SDKs', async () => {
    const loaded = await packagesOf('delivery');
    expect(loaded).toContain('bullmq');
    expect(loaded).toContain('undici');
    expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
  });

  it('a decision process loads no HTTP stack, mail parser or unused SDK', async () => {
    const loaded = await packagesOf('decision');
    expect(loaded).toContain('handlebars');
    expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
  });

  it('an ingest process loads its mail parser, and neither Express (ingest serves on node:http) nor a worker-only SDK', async () => {
    const loaded = await packagesOf('ingest');
    expect(loaded).toContain('mailparser');
    expect(loaded.filter((name) => ['express', 'mjml', 'pdfkit', 'twilio', '@aws-sdk/client-s3', '@aws-sdk/client-sesv2', '@bull-board/express'].includes(name))).toEqual([]);
  });
});
