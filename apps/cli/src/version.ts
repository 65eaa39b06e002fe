import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';

const packageJson = z.object({ name: z.string(), version: z.string() });

/**
 * The singleshot version: package.json's `version`, read from the nearest
 * package.json named `singleshot` above this file (the repository root, or
 * /app in the image; `dist/apps/cli/main.js` and the sources both find it).
 */
export function singleshotVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = packageJson.safeParse(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')));
      if (pkg.success && pkg.data.name === 'singleshot') return pkg.data.version;
    } catch {
      // no (readable) package.json here: look further up
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
