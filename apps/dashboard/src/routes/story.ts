import { Router, type Response } from 'express';
import { readStory, type StoryReaderDeps } from '@singleshot/story';
import type { AdminApiDeps } from '../deps';
import { principalOf } from '../auth';
import { hexKeySchema } from '../params';
import { maySeeMessage } from '../tenancy';
import { problemPage, searchPage, storyPage } from '../story-page';

/** The story's reads from the admin API's stores and the DLQ. */
export function storyDeps(deps: AdminApiDeps): StoryReaderDeps {
  return {
    operations: deps.operations,
    messages: deps.messages,
    journal: deps.journal,
    deadRecord: async (operationKey) => (await deps.queues.dead.getJob(operationKey))?.data ?? null,
    ...(deps.routes ? { routes: deps.routes } : {}),
  };
}

/** Sends a dashboard page, with the headers every page carries. */
export function html(res: Response, status: number, body: string): void {
  // The pages show records and errors only; no script runs on them, and nothing may frame them.
  res.status(status).set({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'", 'cache-control': 'no-store' }).send(body);
}

/**
 * The story pages, mounted at `/admin/story` behind the dashboard's
 * authentication and origin guard: `/admin/story` (a search box; `?key=`
 * goes to the key's page) and `/admin/story/<key>`. Read-only: nothing here
 * changes state.
 */
export function storyRoutes(deps: AdminApiDeps): Router {
  const router = Router();
  const reads = storyDeps(deps);
  router.get('/', (req, res) => {
    const key = typeof req.query.key === 'string' ? req.query.key.trim().toLowerCase() : undefined;
    if (key === undefined || key === '') return html(res, 200, searchPage());
    if (!hexKeySchema.safeParse(key).success) return html(res, 400, problemPage('Not a key', `"${key}" is not a message or operation key: a key is 64 hex characters (a sha256 digest).`, key));
    res.redirect(302, `/admin/story/${key}`);
  });
  router.get('/:key', async (req, res) => {
    const key = String(req.params.key).toLowerCase();
    if (!hexKeySchema.safeParse(key).success) return html(res, 400, problemPage('Not a key', `"${key}" is not a message or operation key: a key is 64 hex characters (a sha256 digest).`, key));
    const story = await readStory(reads, key);
    if (!story || !(await maySeeMessage(deps, principalOf(res).tenant, story.messageKey))) return html(res, 404, problemPage('Not found', `No message or operation ${key}: records are kept for the retention period, and an operation appears once a delivery worker claims it.`, key));
    html(res, 200, storyPage(story));
  });
  return router;
}
