import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// `npm run chaos` runs the built bundle outside vitest: anything it bundles
// that imports vitest (a harness module with describe/it) makes it throw at
// load. That once broke every `npm run chaos` while the bounded run, inside
// vitest, still passed.
const main = resolve(__dirname, '../../dist/test/chaos/main.js');

describe('npm run chaos (the built CLI)', () => {
  it('loads outside vitest and prints its usage', () => {
    expect(existsSync(main), 'npm test builds dist/ before vitest runs').toBe(true);
    const out = spawnSync(process.execPath, [main, '--help'], { encoding: 'utf8' });
    expect(out.stderr).not.toMatch(/Vitest cannot be imported/);
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/--events N --seed S/);
  });
});

describe('npm run chaos:sweep (the built CLI)', () => {
  const sweep = resolve(__dirname, '../../dist/test/chaos/sweep.js');

  it('loads outside vitest, prints its usage, and refuses a sweep without --runs', () => {
    expect(existsSync(sweep), 'npm test builds dist/ before vitest runs').toBe(true);
    const help = spawnSync(process.execPath, [sweep, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--runs N/);
    const bad = spawnSync(process.execPath, [sweep, '--events', '10'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--runs N/);
  });
});
