import { createRuntime, loadConfigOrExit, onShutdown } from '@singleshot/runtime';
import { startIngest } from './server';

// `node dist/apps/ingest/main.js`: the ingest app alone; /healthz, /readyz and
// /metrics are served on its own HTTP port.
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const rt = await createRuntime(config, { app: 'ingest' });
  const ingest = await startIngest(rt);
  onShutdown(rt.logger, async () => {
    await ingest.close();
    await rt.close();
  });
}

main().catch((err: unknown) => {
  console.error('ingest failed to start:', err);
  process.exit(1);
});
