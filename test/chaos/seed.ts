/**
 * The seed of a bounded chaos run: `CHAOS_SEED` when set (to rerun a failing
 * run), otherwise a new one each run, so every CI run tries an interleaving
 * of faults nobody ran before. The seed fixes the run plan (events, fault
 * timeline, the provider's answers), so it is printed before the run starts:
 * a failure that kills the runner still leaves the seed in the log.
 */
export function chaosSeed(label: string, env: NodeJS.ProcessEnv = process.env, random: () => number = Math.random): string {
  const seed = env.CHAOS_SEED ?? String(Math.floor(random() * 1_000_000_000));
  console.log(`[chaos] ${label}: seed ${seed} (rerun it with CHAOS_SEED=${seed})`);
  return seed;
}
