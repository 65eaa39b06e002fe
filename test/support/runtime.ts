import { createLogger } from '@singleshot/observability';
import { parseConfig, type Config } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';

/**
 * A runtime in the test process, for assertions on stores and queues. Kept out
 * of test/harness so the harness depends on no library: lib tests use the
 * harness, and a harness that imported libs would close a dependency cycle.
 */
export async function testRuntime(config: Record<string, unknown>, app = 'test'): Promise<Runtime> {
  const parsed: Config = parseConfig(config);
  return createRuntime(parsed, { app, logger: createLogger({ app, level: parsed.log.level }) });
}
