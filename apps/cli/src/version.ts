// Bundled at build time (esbuild inlines the field), so the version printed is
// the one the code was built from, wherever dist/ is run.
import { version } from '../../../package.json';

/** The singleshot version (package.json's `version`). */
export const VERSION: string = version;
