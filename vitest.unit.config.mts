import { defineConfig } from 'vitest/config';
import base from './vitest.config.mts';

// `npm run test:unit`: the tests that need at most a local redis-server (or
// nothing), for a quick run while editing. Left out, and run by `npm test`:
// tests that spawn the built apps (dist/) or the CLI, and tests that start
// another server (Dovecot, PostgreSQL, the bench's systems) or an external tool.
const SLOW = [
  'apps/cli/src/cli-args.test.ts', // the built CLI
  'apps/cli/src/loadtest/loadtest.test.ts', // the built CLI and a fleet
  'libs/client/src/package.test.ts', // runs tsc to build the package
  'libs/mail/src/imap/imap-source.test.ts', // Dovecot
  'libs/outbox/src/enqueue.test.ts', // PostgreSQL
  'bench/src/bench.test.ts', // the benchmarked systems, PostgreSQL among them
  'bench/src/sources.test.ts', // a fleet per source, with PostgreSQL, RabbitMQ and NATS
];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // One module graph per worker instead of one per file: importing BullMQ,
    // the AWS SDK and the rest anew for each file was most of the run. Each
    // test still starts its own redis-server; `npm test` keeps isolation, so a
    // test that leaned on another file's module state would still fail there.
    isolate: false,
    include: ['libs/**/*.test.ts', 'apps/**/*.test.ts', 'bench/**/*.test.ts', 'test/chaos/checker.test.ts', 'test/chaos/fault-proxy.test.ts', 'test/tools/**/*.test.ts'],
    exclude: ['node_modules/**', '**/*.bench.test.ts', ...SLOW],
  },
});
