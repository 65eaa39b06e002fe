import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN, REPO_ROOT, writeConfigFile } from '@singleshot/test-harness';

// Ingest refuses to listen beyond loopback without producer credentials:
// exit 2 with INGEST_AUTH_REQUIRED, before Redis is
// touched (the Redis URL here points nowhere), for the app alone and for
// `singleshot start`.
async function run(args: string[], config: Record<string, unknown>): Promise<{ code: number | null; stderr: string }> {
  const file = writeConfigFile({ redis: { url: 'redis://127.0.0.1:1' }, log: { level: 'silent' }, ...config });
  try {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, SINGLESHOT_CONFIG: file.file }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    return { code, stderr };
  } finally {
    file.cleanup();
  }
}

describe('ingest on a public address without producer credentials', () => {
  it('node dist/apps/ingest/main.js exits 2 with INGEST_AUTH_REQUIRED', async () => {
    const { code, stderr } = await run(['dist/apps/ingest/main.js'], { ingest: { host: '0.0.0.0', port: 0 } });
    expect(code).toBe(2);
    expect(stderr).toContain('INGEST_AUTH_REQUIRED');
  });

  it('singleshot start --only ingest exits 2 with INGEST_AUTH_REQUIRED', async () => {
    const { code, stderr } = await run([CLI_MAIN, 'start', '--only', 'ingest'], { ingest: { host: '0.0.0.0', port: 0 } });
    expect(code).toBe(2);
    expect(stderr).toContain('INGEST_AUTH_REQUIRED');
  });
});
