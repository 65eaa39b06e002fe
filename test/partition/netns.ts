import { execFileSync } from 'node:child_process';

/**
 * Network namespaces and veth pairs for partition tests, driven through
 * iproute2 (`ip`, `tc`). Every name starts with `ssnp<pid in base 36>`, so a
 * run only ever touches what it created, and leftovers of a run whose process
 * is gone (a killed test) can be told apart from a run still going on.
 *
 * Addresses come from 10.231.0.0/16 and exist only on the veth pairs created
 * here: the namespaces get no default route, so nothing sent inside them can
 * leave the machine; the root namespace ends every link itself (no forwarding).
 */
const PREFIX = 'ssnp';

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryRun(cmd: string, args: string[]): boolean {
  try {
    run(cmd, args);
    return true;
  } catch {
    return false;
  }
}

/** Why namespaces cannot be used here, or undefined when they can (root, `ip netns add` works). */
export function netnsUnavailableReason(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'network namespaces need root (uid 0)';
  const probe = `${PREFIX}${process.pid.toString(36)}-probe`;
  try {
    run('ip', ['netns', 'add', probe]);
  } catch (err) {
    return `\`ip netns add\` failed: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`;
  }
  tryRun('ip', ['netns', 'del', probe]);
  if (!tryRun('tc', ['-V'])) return '`tc` (iproute2) is not installed';
  return undefined;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid that made a `ssnp…` name, or undefined for a name that is not ours. */
function ownerPid(name: string): number | undefined {
  const match = new RegExp(`^${PREFIX}([0-9a-z]+)-`).exec(name);
  return match?.[1] ? parseInt(match[1], 36) : undefined;
}

/**
 * Deletes namespaces and links left by partition runs whose process is gone.
 * Links are listed from `ip -o link` (`3: ssnpab12-vr@if2: …`).
 */
export function clearLeftovers(): string[] {
  const cleared: string[] = [];
  const stale = (name: string) => {
    const pid = ownerPid(name);
    return pid !== undefined && pid !== process.pid && !pidAlive(pid);
  };
  for (const line of run('ip', ['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0] ?? '';
    if (name.startsWith(PREFIX) && stale(name) && tryRun('ip', ['netns', 'del', name])) cleared.push(`netns ${name}`);
  }
  for (const line of run('ip', ['-o', 'link']).split('\n')) {
    const name = (line.split(': ')[1] ?? '').split('@')[0] ?? '';
    if (name.startsWith(PREFIX) && stale(name) && tryRun('ip', ['link', 'del', name])) cleared.push(`link ${name}`);
  }
  return cleared;
}

/** A /24 of 10.231.0.0/16 that no address or route of the root namespace touches now. */
function freeSubnet(): number {
  const used = run('ip', ['-4', '-o', 'addr']) + run('ip', ['-4', 'route', 'show', 'table', 'all']);
  for (let x = 1; x < 255; x++) if (!used.includes(`10.231.${x}.`)) return x;
  throw new Error('no free 10.231.x.0/24 for the partition test');
}

/** One veth pair: `root` end in the root namespace, `inner` end in namespace `ns`, a /30 between them. */
export interface Link {
  readonly root: string;
  readonly inner: string;
  readonly ns: string;
  /** Address of the root end (e.g. 10.231.7.1). */
  readonly rootAddress: string;
  /** Address of the namespace end (e.g. 10.231.7.2). */
  readonly innerAddress: string;
}

/** How `shape` slows a link: `netem` (fixed delay) when the kernel has it, else a `tbf` bottleneck. */
export type Shaper = 'netem' | 'tbf';

/** The namespaces and links of one run; `destroy()` removes all of them. */
export class NetnsLab {
  readonly prefix = `${PREFIX}${process.pid.toString(36)}`;
  readonly subnet = freeSubnet();
  private readonly namespaces: string[] = [];
  private readonly links: Link[] = [];
  private nextBlock = 0;
  private shaperKind: Shaper | undefined;

  /** Creates namespace `<prefix>-<suffix>` with its loopback up. */
  namespace(suffix: string): string {
    const ns = `${this.prefix}-${suffix}`;
    run('ip', ['netns', 'add', ns]);
    this.namespaces.push(ns);
    run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    return ns;
  }

  /** A veth pair between the root namespace and `ns`, on the next /30 of this run's /24. */
  link(ns: string, suffix: string): Link {
    if (this.nextBlock >= 64) throw new RangeError('a run has 64 links at most');
    const base = this.nextBlock++ * 4;
    const link: Link = {
      root: `${this.prefix}-${suffix}r`,
      inner: `${this.prefix}-${suffix}n`,
      ns,
      rootAddress: `10.231.${this.subnet}.${base + 1}`,
      innerAddress: `10.231.${this.subnet}.${base + 2}`,
    };
    run('ip', ['link', 'add', link.root, 'type', 'veth', 'peer', 'name', link.inner]);
    this.links.push(link);
    run('ip', ['link', 'set', link.inner, 'netns', ns]);
    run('ip', ['addr', 'add', `${link.rootAddress}/30`, 'dev', link.root]);
    run('ip', ['-n', ns, 'addr', 'add', `${link.innerAddress}/30`, 'dev', link.inner]);
    run('ip', ['link', 'set', link.root, 'up']);
    run('ip', ['-n', ns, 'link', 'set', link.inner, 'up']);
    return link;
  }

  /** Both ends down: the kernel drops what is sent, and nothing reaches the other side (a cut). */
  cut(link: Link): void {
    run('ip', ['-n', link.ns, 'link', 'set', link.inner, 'down']);
    run('ip', ['link', 'set', link.root, 'down']);
  }

  /** Both ends up again; IPv4 addresses stayed, so the connected routes come back. */
  restore(link: Link): void {
    run('ip', ['link', 'set', link.root, 'up']);
    run('ip', ['-n', link.ns, 'link', 'set', link.inner, 'up']);
  }

  /** Which qdisc `shape` uses on this kernel (netem is a kernel option some kernels lack). */
  shaper(): Shaper {
    if (!this.shaperKind) {
      const probe = this.links[0];
      if (!probe) throw new Error('create a link before shaping');
      const ok = tryRun('tc', ['qdisc', 'add', 'dev', probe.root, 'root', 'netem', 'delay', '1ms']);
      if (ok) tryRun('tc', ['qdisc', 'del', 'dev', probe.root, 'root']);
      this.shaperKind = ok ? 'netem' : 'tbf';
    }
    return this.shaperKind;
  }

  /**
   * Slows both directions of a link: netem `delay <delayMs>ms`, or without
   * netem a token bucket of `rateKbit` (small Redis commands then wait their
   * turn behind one another: a slow link rather than a fixed latency).
   */
  shape(link: Link, opts: { delayMs: number; rateKbit: number }): string {
    const args = this.shaper() === 'netem' ? ['netem', 'delay', `${opts.delayMs}ms`] : ['tbf', 'rate', `${opts.rateKbit}kbit`, 'burst', '1600', 'latency', '10s'];
    run('tc', ['qdisc', 'replace', 'dev', link.root, 'root', ...args]);
    run('ip', ['netns', 'exec', link.ns, 'tc', 'qdisc', 'replace', 'dev', link.inner, 'root', ...args]);
    return args.join(' ');
  }

  /** Removes the shaping of a link (both ends). */
  unshape(link: Link): void {
    tryRun('tc', ['qdisc', 'del', 'dev', link.root, 'root']);
    tryRun('ip', ['netns', 'exec', link.ns, 'tc', 'qdisc', 'del', 'dev', link.inner, 'root']);
  }

  /** Deletes every link and namespace of this run; returns what could not be deleted. */
  destroy(): string[] {
    const left: string[] = [];
    // Deleting one end of a veth deletes its peer; a namespace's end goes with the namespace.
    for (const link of this.links.splice(0)) if (!tryRun('ip', ['link', 'del', link.root]) && linkExists(link.root)) left.push(`link ${link.root}`);
    for (const ns of this.namespaces.splice(0)) if (!tryRun('ip', ['netns', 'del', ns])) left.push(`netns ${ns}`);
    return left;
  }

  /** Names of this run's namespaces and links that still exist (for the cleanup check). */
  remaining(): string[] {
    const found: string[] = [];
    for (const line of run('ip', ['netns', 'list']).split('\n')) if (line.startsWith(`${this.prefix}-`)) found.push(line.split(' ')[0] as string);
    for (const line of run('ip', ['-o', 'link']).split('\n')) {
      const name = (line.split(': ')[1] ?? '').split('@')[0] ?? '';
      if (name.startsWith(`${this.prefix}-`)) found.push(name);
    }
    return found;
  }
}

function linkExists(name: string): boolean {
  return tryRun('ip', ['link', 'show', name]);
}
