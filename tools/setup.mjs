// `npm run setup` (and npm's `pretest`): installs the system packages the tests
// need that npm cannot, listed in tools/system-packages.txt. As root it runs
// apt-get for what is missing; otherwise it prints the command and fails.
//   --check     only report what is missing (exit 1 if anything is)
//   --dry-run   print the commands instead of running them
//   --list F    read another list (tests)
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_LIST = fileURLToPath(new URL('system-packages.txt', import.meta.url));

/**
 * Parses the package list: one package a line with its checks (a command on
 * PATH, or a path starting with `/`) and `stop:` / `stop-new:` services.
 * Throws on a package without a check or a package listed twice.
 */
export function parsePackageList(text) {
  const entries = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const words = raw.replace(/#.*/, '').trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) continue;
    const [name, ...rest] = words;
    const entry = { name, checks: [], stop: [], stopIfNew: [] };
    for (const word of rest) {
      if (word.startsWith('stop:')) entry.stop.push(word.slice('stop:'.length));
      else if (word.startsWith('stop-new:')) entry.stopIfNew.push(word.slice('stop-new:'.length));
      else entry.checks.push(word);
    }
    if (entry.checks.length === 0) throw new Error(`line ${index + 1}: package ${name} has no check`);
    if (entries.some((e) => e.name === name)) throw new Error(`line ${index + 1}: package ${name} is listed twice`);
    entries.push(entry);
  }
  return entries;
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether a path exists as an executable; a `*` in a segment matches any name within that folder. */
function pathHolds(path) {
  const segments = path.split('/').slice(1);
  const walk = (dir, rest) => {
    if (rest.length === 0) return isExecutable(dir);
    const [segment, ...tail] = rest;
    if (!segment.includes('*')) return walk(join(dir, segment), tail);
    const pattern = new RegExp(`^${segment.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    let names;
    try {
      names = readdirSync(dir);
    } catch {
      return false;
    }
    return names.some((name) => pattern.test(name) && walk(join(dir, name), tail));
  };
  return walk('/', segments);
}

/** Whether one check holds: a path is an executable file, a command is one in a PATH folder. */
export function checkHolds(check, pathEnv = process.env.PATH ?? '') {
  if (check.startsWith('/')) return pathHolds(check);
  return pathEnv.split(delimiter).some((dir) => dir !== '' && isExecutable(join(dir, check)));
}

/** The entries none of whose checks hold. */
export function missingPackages(entries, pathEnv = process.env.PATH ?? '') {
  return entries.filter((entry) => !entry.checks.some((check) => checkHolds(check, pathEnv)));
}

/**
 * What a run does: as root, `apt-get update` and install what is missing,
 * then stop the services the packages' Debian scripts start (`stop-new` ones
 * only when this run installed them); otherwise the `sudo` command to print.
 * Each command is an argv array.
 */
export function planSetup(entries, missing, isRoot) {
  const names = missing.map((entry) => entry.name);
  const install = ['apt-get', 'install', '-y', '--no-install-recommends', ...names];
  if (!isRoot) return { commands: [], advice: names.length > 0 ? ['sudo', ...install].join(' ') : undefined };
  const commands = names.length > 0 ? [['apt-get', 'update', '-qq'], install] : [];
  const installed = new Set(names);
  const services = entries.flatMap((entry) => [...entry.stop, ...(installed.has(entry.name) ? entry.stopIfNew : [])]);
  for (const service of services) commands.push(['service', service, 'stop']);
  return { commands, advice: undefined };
}

function parseArgs(argv) {
  const options = { check: false, dryRun: false, list: DEFAULT_LIST };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--check') options.check = true;
    else if (argv[i] === '--dry-run') options.dryRun = true;
    else if (argv[i] === '--list' && argv[i + 1]) options.list = argv[++i];
    else throw new Error(`unknown argument ${argv[i]} (usage: setup.mjs [--check] [--dry-run] [--list FILE])`);
  }
  return options;
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const entries = parsePackageList(readFileSync(options.list, 'utf8'));
  const missing = missingPackages(entries);
  const names = missing.map((entry) => entry.name).join(' ');
  if (options.check) {
    console.log(missing.length > 0 ? `setup: missing system packages: ${names}` : 'setup: every system package is present');
    return missing.length > 0 ? 1 : 0;
  }
  const { commands, advice } = planSetup(entries, missing, process.getuid?.() === 0);
  if (advice) {
    console.error(`setup: missing system packages: ${names}\nsetup: install them as root, then run again:\n  ${advice}`);
    return 1;
  }
  // Debian's install scripts must not ask anything: CI has no stdin.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const command of commands) {
    const stopping = command[0] === 'service';
    if (options.dryRun) {
      console.log(stopping ? command.join(' ') : `DEBIAN_FRONTEND=noninteractive ${command.join(' ')}`);
      continue;
    }
    if (command[1] === 'install') console.log(`setup: installing ${names}`);
    // A service that is not running (or no service command in a container) is fine.
    const result = spawnSync(command[0], command.slice(1), { env, stdio: stopping ? 'ignore' : 'inherit' });
    if (!stopping && result.status !== 0) {
      console.error(`setup: ${command.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`);
      return 1;
    }
  }
  if (!options.dryRun && missing.length > 0) {
    const still = missingPackages(entries);
    if (still.length > 0) {
      console.error(`setup: still missing after apt-get: ${still.map((entry) => entry.name).join(' ')}`);
      return 1;
    }
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
