import { setTimeout as delay } from 'node:timers/promises';
import { Socket } from 'node:net';
import { startFaultProxy, startTestRedis } from '@singleshot/test-harness';
import type { ChaosStore } from './chaos-store';

const sleep = (ms: number, signal: AbortSignal) => delay(Math.max(0, ms), undefined, { signal }).catch(() => undefined);

function answers(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}

/**
 * One `redis-server` (AOF, `appendfsync always`: a SIGKILL loses nothing
 * acknowledged) behind one fault proxy. Its server fault is `kill-redis`:
 * SIGKILL, down a while, restart on the AOF.
 */
export async function startSingleStore(): Promise<ChaosStore> {
  const redis = await startTestRedis({ appendfsync: 'always' });
  const proxy = await startFaultProxy({ host: new URL(redis.url).hostname, port: redis.port }).catch(async (err: unknown) => {
    await redis.destroy();
    throw err;
  });
  let busy = false;
  return {
    kind: 'single',
    fleetRedis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: 'ss' },
    checkerRedis: { url: redis.url, keyPrefix: 'ss', checkOnStart: false },
    linkLabel: 'redis',
    linkProxies: [proxy],
    linkProxy: async () => ({ proxy, name: 'redis' }),
    serverFault: async (action, ctx) => {
      if (action.kind !== 'kill-redis' || busy) return;
      busy = true;
      try {
        await redis.kill9();
        ctx.count('kill-redis');
        ctx.note(`SIGKILL redis; down ${action.downMs} ms`);
        await sleep(action.downMs, ctx.healing);
        await redis.restart();
        ctx.note('redis restarted on its AOF');
      } finally {
        busy = false;
      }
    },
    heal: async () => {
      if (!(await answers(redis.port))) await redis.restart();
    },
    close: async () => {
      await proxy.close().catch(() => undefined);
      await redis.destroy();
    },
  };
}
