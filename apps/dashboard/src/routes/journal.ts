import { Router } from 'express';
import type { AdminApiDeps } from '../deps';
import { journalQuerySchema, parseInput } from '../params';

/** `GET /journal?from=&to=&limit=`: entries between two instants (default: the last hour), oldest first. */
export function journalRoutes(deps: AdminApiDeps): Router {
  const router = Router();
  router.get('/journal', async (req, res) => {
    const { from, to, limit } = parseInput(journalQuerySchema, req.query, 'query');
    const entries = await deps.journal.range(from, to, limit);
    res.json({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), limit, count: entries.length, entries });
  });
  return router;
}
