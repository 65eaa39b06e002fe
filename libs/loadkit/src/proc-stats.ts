import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU, memory and syscalls of processes from /proc (Linux). CPU is utime +
 * stime (+ the reaped children's cutime + cstime where asked), in seconds;
 * USER_HZ is 100. A process that cannot be read (gone, or not Linux) counts as
 * `unreadable`: 0 unless the caller would rather show NaN.
 */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** How a reading treats a process: its reaped children included, and the figure for one that cannot be read. */
export interface ProcReading {
  children?: boolean;
  unreadable?: number;
}

/** CPU seconds of one process; with `children`, also those of its waited-for children. */
export function cpuSecondsOf(pid: number | undefined, { children = false, unreadable = 0 }: ProcReading = {}): number {
  const f = pid ? statFields(pid) : undefined;
  if (!f) return unreadable;
  const own = Number(f[11]) + Number(f[12]);
  return (children ? own + Number(f[13]) + Number(f[14]) : own) / 100;
}

/** Direct children of a process (PostgreSQL's backends and helpers under the postmaster). */
export function childPids(parent: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (f && Number(f[1]) === parent) out.push(Number(name));
  }
  return out;
}

/** CPU seconds of a process and all its children, live and reaped. */
export function cpuSecondsOfTree(pid: number | undefined): number {
  if (!pid) return 0;
  return cpuSecondsOf(pid, { children: true }) + childPids(pid).reduce((sum, c) => sum + cpuSecondsOf(c, { children: true }), 0);
}

/** Peak resident memory (VmHWM) of a process in MiB. */
export function peakRssMb(pid: number | undefined, { unreadable = 0 }: Pick<ProcReading, 'unreadable'> = {}): number {
  if (!pid) return unreadable;
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? unreadable : Number(kb) / 1024;
  } catch {
    return unreadable;
  }
}

/** Read and write syscalls of a process and its direct children (/proc/PID/io syscr + syscw): stable on a loaded machine, unlike time. */
export function syscallsOfTree(pid: number | undefined): number {
  if (!pid) return 0;
  const of = (p: number) => {
    try {
      const io = readFileSync(`/proc/${p}/io`, 'utf8');
      return Number(/syscr:\s+(\d+)/.exec(io)?.[1] ?? 0) + Number(/syscw:\s+(\d+)/.exec(io)?.[1] ?? 0);
    } catch {
      return 0;
    }
  };
  return of(pid) + childPids(pid).reduce((sum, c) => sum + of(c), 0);
}

/** Peak resident memory of a process and its direct children (`singleshot start`'s app processes), MiB. */
export function peakRssOfTreeMb(pid: number | undefined): number {
  if (!pid) return 0;
  return peakRssMb(pid) + childPids(pid).reduce((sum, c) => sum + peakRssMb(c), 0);
}
