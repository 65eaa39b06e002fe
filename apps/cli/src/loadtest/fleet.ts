import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, redisAnswers } from '../embedded-redis';

/**
 * `loadtest --embedded`: a throwaway Redis (AOF on) and a `singleshot start`
 * child process routing `shop/order.created` events to the loadtest's sink, so
 * the figure includes real process and network boundaries.
 */
export interface EmbeddedFleet {
  ingestUrl: string;
  stop(): Promise<void>;
}

export async function startEmbeddedFleet(opts: { sinkPort: number; appendfsync: string; concurrency: number }): Promise<EmbeddedFleet> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-loadtest-'));
  const redisPort = await freePort();
  const ingestPort = await freePort();
  const redis: ChildProcess = spawn(
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', opts.appendfsync,
      '--save', '', '--maxmemory-policy', 'noeviction', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  for (let i = 0; !(await redisAnswers(redisUrl, 300)); i++) {
    if (i > 100 || redis.exitCode !== null) throw new Error('loadtest: redis-server did not start (is it on PATH?)');
    await new Promise((r) => setTimeout(r, 100));
  }
  const configFile = join(dir, 'singleshot.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      redis: { url: redisUrl },
      log: { level: 'warn' },
      ingest: { port: ingestPort, host: '127.0.0.1' },
      decision: { concurrency: opts.concurrency, metricsPort: 0 },
      delivery: { concurrency: opts.concurrency, metricsPort: 0 },
      routes: [
        {
          name: 'loadtest',
          match: { source: 'loadtest' },
          action: 'notify',
          channel: 'webhook',
          recipients: 'event',
          template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}} was created' },
        },
      ],
      providers: {
        webhook: [{ name: 'sink', type: 'http', url: `http://127.0.0.1:${opts.sinkPort}/send`, lookupUrl: `http://127.0.0.1:${opts.sinkPort}/messages`, timeoutMs: 5000 }],
      },
    }),
  );
  const main = resolve(__dirname, '../cli/main.js');
  const fleet: ChildProcess = spawn(process.execPath, [main, 'start', '--only', 'ingest,decision,delivery', '--config', configFile], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, REDIS_URL: redisUrl },
  });
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${ingestUrl}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 300 || fleet.exitCode !== null) throw new Error('loadtest: the embedded fleet did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const exited = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null ? r() : p.once('exit', () => r())));
  return {
    ingestUrl,
    stop: async () => {
      fleet.kill('SIGTERM');
      await exited(fleet);
      redis.kill('SIGTERM');
      await exited(redis);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
