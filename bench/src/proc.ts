import { readFileSync } from 'node:fs';

/** The machine, for the results file and BENCHMARKS.md. */
export function machine(): { cpus: number; cpuModel: string; memoryGiB: number; loadAverage: string } {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const meminfo = readFileSync('/proc/meminfo', 'utf8');
  return {
    cpus: (cpuinfo.match(/^processor\s*:/gm) ?? []).length,
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    memoryGiB: Math.round((Number(/MemTotal:\s+(\d+)/.exec(meminfo)?.[1] ?? 0) / 1024 / 1024) * 10) / 10,
    // Other work on the machine skews absolute figures; ratios within one run are what count.
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
}
