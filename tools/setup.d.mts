/** One package of tools/system-packages.txt. */
export interface SystemPackage {
  /** The Debian package name. */
  name: string;
  /** Commands on PATH or absolute paths (`*` within one folder); the package is present when any holds. */
  checks: string[];
  /** Services to stop on every root run (Debian starts them; the tests run their own). */
  stop: string[];
  /** Services to stop only when this run installed the package. */
  stopIfNew: string[];
}
/** tools/system-packages.txt. */
export const DEFAULT_LIST: string;
/** Parses the package list; throws on a package without a check or listed twice. */
export function parsePackageList(text: string): SystemPackage[];
/** Whether one check holds, commands looked up in `pathEnv` (default: PATH). */
export function checkHolds(check: string, pathEnv?: string): boolean;
/** The packages none of whose checks hold. */
export function missingPackages(entries: SystemPackage[], pathEnv?: string): SystemPackage[];
/** The commands a root run executes (argv arrays), or for a non-root run the `sudo apt-get install …` line to print. */
export function planSetup(
  entries: SystemPackage[],
  missing: SystemPackage[],
  isRoot: boolean,
): { commands: string[][]; advice: string | undefined };
