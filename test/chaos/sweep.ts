/**
 * `npm run chaos:sweep -- --runs N [--first-seed S] [--cluster] [--events E] [any npm run chaos option]`
 * (node dist/test/chaos/sweep.js): runs the chaos suite N times in a row, one
 * seed after another (S, S+1, …; S new each sweep unless given), each run in
 * its own process (`dist/test/chaos/main.js --json`, so one run's servers and
 * fleet are gone before the next starts), and prints one line per seed: its
 * duplicates, lost operations, faults injected and violations. Exits 1 when
 * any run broke a rule, 2 on bad arguments. A failing seed reruns alone with
 * `npm run chaos -- --seed S …`.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChaosResult } from './run-chaos';

const USAGE = 'usage: npm run chaos:sweep -- --runs N [--first-seed S] [--cluster] [--events E] [other npm run chaos options]';

interface SweepRow {
  seed: string;
  duplicates: number | '?';
  lost: number | '?';
  faults: number | '?';
  violations: string[];
}

function runOne(main: string, seed: string, passThrough: string[]): Promise<SweepRow> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [main, '--json', '--seed', seed, ...passThrough], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.on('close', (code) => {
      // --json prints the result as the last JSON object on stdout.
      const start = out.indexOf('{\n');
      try {
        const r = JSON.parse(out.slice(start)) as ChaosResult;
        const faults = Object.values(r.faults).reduce((a, b) => a + b, 0);
        done({ seed, duplicates: r.check.duplicates, lost: r.check.lost, faults, violations: r.violations });
      } catch {
        done({ seed, duplicates: '?', lost: '?', faults: '?', violations: [`the run printed no result (exit ${String(code)})`] });
      }
    });
  });
}

async function main(): Promise<number> {
  let values: { runs?: string; 'first-seed'?: string; help?: boolean };
  let rest: string[];
  try {
    const parsed = parseArgs({
      options: { runs: { type: 'string' }, 'first-seed': { type: 'string' }, help: { type: 'boolean' } },
      strict: false,
      allowPositionals: true,
    });
    values = parsed.values as typeof values;
    rest = process.argv.slice(2).filter((a, i, all) => !['--runs', '--first-seed', '--help'].includes(a) && !['--runs', '--first-seed'].includes(all[i - 1] ?? ''));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const runs = Number(values.runs);
  const first = values['first-seed'] !== undefined ? Number(values['first-seed']) : Math.floor(Math.random() * 1_000_000_000);
  if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(first) || first < 0 || rest.includes('--seed') || rest.includes('--json')) {
    console.error(`--runs N (a positive integer) is required; --first-seed S must be a non-negative integer; --seed and --json are the sweep's own\n${USAGE}`);
    return 2;
  }
  const main = resolve(__dirname, 'main.js');
  console.log(`sweep: ${runs} run(s) from seed ${first}: ${rest.join(' ') || '(default options)'}`);
  console.log('seed        duplicates  lost  faults  violations');
  let failed = 0;
  for (let i = 0; i < runs; i++) {
    const row = await runOne(main, String(first + i), rest);
    if (row.violations.length > 0) failed++;
    console.log(`${row.seed.padEnd(11)} ${String(row.duplicates).padStart(10)}  ${String(row.lost).padStart(4)}  ${String(row.faults).padStart(6)}  ${row.violations.length === 0 ? 'none' : row.violations.join('; ')}`);
  }
  console.log(`${runs - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
