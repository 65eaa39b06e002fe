import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Where the kernel's ephemeral port range starts (Linux), or the IANA range's start where it cannot be read. */
function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > 0) return low;
  } catch {
    // not Linux
  }
  return 49152;
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback TCP port below the kernel's ephemeral range, for a server
 * that cannot listen on port 0 and say which port it got (redis-server,
 * PostgreSQL). A port the OS hands out for `listen(0)` comes from that range,
 * and so does the local port of every outgoing connection on the machine: in
 * the time between this check and the server binding the port, any client on
 * the machine may take it. Below the range only another explicit bind can.
 */
export async function freePort(): Promise<number> {
  const floor = 10_000;
  const ceiling = Math.max(floor + 1_000, ephemeralRangeStart());
  for (let i = 0; i < 100; i++) {
    const port = floor + Math.floor(Math.random() * (ceiling - floor));
    if (await canBind(port)) return port;
  }
  throw new Error(`loadkit: no free loopback port in ${floor}–${ceiling - 1} after 100 tries`);
}

/**
 * The port a `singleshot start` process running ingest listens on, read from
 * its `singleshot_started` log line (stdout piped, JSON logs): with
 * `ingest.port: 0` the kernel picks the port as the server binds it, so no
 * other process can take it between a choice and the bind. `exited` when the
 * process ends before the line, `timeout` when it has not written it within
 * `timeoutMs` (the line is at `info`: a level above hides it). The rest of
 * stdout is drained, so a full pipe never blocks the process.
 */
export function startedIngestPort(child: ChildProcess, timeoutMs = 30_000): Promise<number | 'exited' | 'timeout'> {
  const stdout = child.stdout;
  if (!stdout) throw new Error('loadkit: startedIngestPort needs the child spawned with stdout piped');
  return new Promise((resolve) => {
    const lines = createInterface({ input: stdout });
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    const done = (result: number | 'exited' | 'timeout') => {
      clearTimeout(timer);
      child.off('exit', onExit);
      lines.off('line', onLine);
      lines.close();
      stdout.resume();
      resolve(result);
    };
    const onExit = () => done('exited');
    const onLine = (line: string) => {
      if (!line.startsWith('{')) return;
      try {
        const entry = JSON.parse(line) as { event?: unknown; ingestPort?: unknown };
        if (entry.event === 'singleshot_started' && typeof entry.ingestPort === 'number') done(entry.ingestPort);
      } catch {
        // not a log line
      }
    };
    lines.on('line', onLine);
    child.once('exit', onExit);
    if (child.exitCode !== null || child.signalCode !== null) done('exited');
  });
}
