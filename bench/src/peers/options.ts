/** What the bench passes a peer process (one JSON argument). */
export interface PeerOptions {
  system: 'bullmq-noop' | 'bullmq-naive' | 'postgres-outbox';
  port: number;
  sinkUrl: string;
  concurrency: number;
  redisUrl?: string;
  postgresUrl?: string;
}
