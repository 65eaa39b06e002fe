import { startBullmqNaive } from './peers/bullmq-naive';
import { startBullmqNoop } from './peers/bullmq-noop';
import type { PeerOptions } from './peers/options';
import { startPostgresOutbox } from './peers/postgres-outbox';

/** A peer system in its own process: `node dist/bench/peer.js '<PeerOptions JSON>'`. */
const options = JSON.parse(process.argv[2] ?? '{}') as PeerOptions;
const start = { 'bullmq-noop': startBullmqNoop, 'bullmq-naive': startBullmqNaive, 'postgres-outbox': startPostgresOutbox }[options.system];
if (!start) {
  console.error(`peer: unknown system ${String(options.system)}`);
  process.exit(2);
}
start(options).catch((err: unknown) => {
  console.error('peer failed to start:', err);
  process.exit(1);
});
process.on('SIGTERM', () => process.exit(0));
