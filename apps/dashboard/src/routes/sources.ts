import { Router } from 'express';
import type { AdminApiDeps } from '../deps';

/** `GET /sources`: every configured source with what a relay last reported of it (state, lag, when, by whom). */
export function sourceRoutes(deps: AdminApiDeps): Router {
  const router = Router();
  router.get('/sources', async (_req, res) => {
    res.json({ sources: deps.sources ? await deps.sources.list() : [] });
  });
  return router;
}
