import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type ChaosApp = 'ingest' | 'decision' | 'delivery';

/**
 * The repo root, found by walking up to singleshot's package.json. The chaos
 * driver runs both from source (vitest) and bundled (dist/test/chaos/main.js),
 * so a fixed `../..` from this file is right in one of them only.
 */
export function findRepoRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'singleshot') return dir;
    if (dirname(dir) === dir) throw new Error(`no singleshot package.json above ${from}`);
  }
}

/** One app process of the fleet; a restart replaces the OS process, not the member. */
export interface FleetMember {
  /** e.g. `delivery-2`. */
  readonly name: string;
  readonly app: ChaosApp;
  pid(): number | undefined;
  running(): boolean;
  /** SIGSTOPped and not yet continued. */
  stopped(): boolean;
  /** Warnings, errors and shutdown lines the process logged, and its stderr (last lines), for failure reports. */
  tail(): string;
}

export interface UnexpectedExit {
  member: string;
  code: number | null;
  signal: string | null;
  tail: string;
}

class Member implements FleetMember {
  child: ChildProcess | undefined;
  isStopped = false;
  expectingExit = false;
  exit: Promise<void> = Promise.resolve();
  started = false;
  private readonly lines: string[] = [];

  constructor(
    readonly name: string,
    readonly app: ChaosApp,
  ) {}

  pid = () => (this.running() ? this.child?.pid : undefined);
  running = () => Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  stopped = () => this.isStopped && this.running();
  tail = () => this.lines.join('\n');

  remember(line: string): void {
    this.lines.push(line.slice(0, 500));
    if (this.lines.length > 40) this.lines.shift();
  }
}

/**
 * The fleet of a chaos run as separate OS processes, each
 * `node dist/apps/cli/main.js start --only <app> --config <file>` (what the
 * harness's `spawnApps` runs), so SIGKILL and SIGSTOP hit real processes with
 * their own Redis connections. `METRICS_PORT=0` lets several of one app share
 * the host; REDIS_URL and PORT are removed from their environment so they reach
 * Redis only through the config's address (the fault proxy) and ingest keeps
 * its configured port across restarts.
 */
export class ChaosFleet {
  readonly members: FleetMember[];
  readonly unexpectedExits: UnexpectedExit[] = [];
  private readonly all: Member[];
  private readonly cliMain: string;
  private readonly root: string;

  /**
   * @param logDir when set, every member's warnings, errors and stderr are also
   *   appended to `<logDir>/<member>.log` (all its incarnations), for diagnosis.
   */
  constructor(
    private readonly configFile: string,
    shape: Record<ChaosApp, number>,
    private readonly logDir?: string,
  ) {
    this.root = findRepoRoot();
    this.cliMain = join(this.root, 'dist/apps/cli/main.js');
    if (!existsSync(this.cliMain)) throw new Error(`${this.cliMain} is missing: run \`node tools/build.mjs\` first`);
    this.all = (Object.entries(shape) as [ChaosApp, number][]).flatMap(([app, n]) =>
      Array.from({ length: n }, (_, i) => new Member(`${app}-${i}`, app)),
    );
    this.members = this.all;
  }

  /** Starts every member and waits until each has logged that it started. */
  async start(): Promise<void> {
    await Promise.all(this.all.map((m) => this.launch(m)));
  }

  byPid(pid: number): FleetMember | undefined {
    return this.all.find((m) => m.pid() === pid);
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(member: FleetMember): Promise<void> {
    const m = member as Member;
    if (!m.running()) return;
    m.expectingExit = true;
    m.child?.kill('SIGKILL');
    await m.exit;
  }

  /** Starts the member again (a no-op while it runs). */
  async restart(member: FleetMember): Promise<void> {
    const m = member as Member;
    if (m.running()) return;
    await this.launch(m);
  }

  stop(member: FleetMember): void {
    const m = member as Member;
    if (!m.running()) return;
    m.child?.kill('SIGSTOP');
    m.isStopped = true;
  }

  cont(member: FleetMember): void {
    const m = member as Member;
    m.isStopped = false;
    if (m.running()) m.child?.kill('SIGCONT');
  }

  /** Continues stopped members and starts dead ones: the fleet whole again. */
  async heal(): Promise<void> {
    for (const m of this.all) if (m.isStopped) this.cont(m);
    await Promise.all(this.all.filter((m) => !m.running()).map((m) => this.launch(m)));
  }

  async close(): Promise<void> {
    await Promise.all(
      this.all.map(async (m) => {
        m.expectingExit = true;
        if (m.running()) {
          m.child?.kill('SIGCONT');
          m.child?.kill('SIGKILL');
        }
        await m.exit;
      }),
    );
  }

  private keep(m: Member, text: string): void {
    if (this.logDir) appendFileSync(join(this.logDir, `${m.name}.log`), text.endsWith('\n') ? text : `${text}\n`);
  }

  private async launch(m: Member): Promise<void> {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0' };
    delete env.REDIS_URL;
    delete env.PORT;
    const child = spawn(process.execPath, [this.cliMain, 'start', '--only', m.app, '--config', this.configFile], {
      cwd: this.root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    m.child = child;
    m.started = false;
    m.isStopped = false;
    m.expectingExit = false;
    m.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        if (!m.expectingExit) this.unexpectedExits.push({ member: m.name, code, signal, tail: m.tail() });
        resolve();
      }),
    );
    let buffer = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const event = logEvent(line);
        if (event === 'singleshot_started') m.started = true;
        // Warnings and errors, and the shutdown lifecycle (info): a member that exits on its own says why.
        else if (/"level":(40|50|60|"warn"|"error"|"fatal")/.test(line) || (typeof event === 'string' && event.startsWith('shutdown_'))) {
          m.remember(line);
          this.keep(m, line);
        }
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      m.remember(chunk.toString());
      this.keep(m, chunk.toString());
    });

    const deadline = Date.now() + 60_000;
    while (!m.started) {
      if (child.exitCode !== null || child.signalCode !== null) {
        if (m.expectingExit) return;
        throw new Error(`${m.name} exited during start (${child.exitCode ?? child.signalCode}):\n${m.tail()}`);
      }
      if (Date.now() > deadline) throw new Error(`${m.name} did not start within 60 s:\n${m.tail()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The `event` field of a JSON log line (lifecycle lines carry one); undefined for other lines. */
function logEvent(line: string): unknown {
  if (!line.includes('"event"')) return undefined;
  try {
    return (JSON.parse(line) as { event?: unknown }).event;
  } catch {
    return undefined;
  }
}
