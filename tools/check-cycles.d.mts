/** The import graph under `root` (apps/, libs/, bench/, test/): file → files it imports, absolute paths. */
export function importGraph(root: string): Map<string, string[]>;
/** The import cycles under `root`: each strongly connected component's files and one concrete cycle, relative to root. */
export function findCycles(root: string): { files: string[]; cycle: string[] }[];
