import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { jsonAnswer, ref } from '../admin-schemas';
import { journalQuerySchema } from '../params';

const instant = { type: 'string', format: 'date-time' };

/** `GET /journal?from=&to=&limit=`: entries between two instants (default: the last hour), oldest first. */
export const JOURNAL_ROUTES: readonly AdminRoute[] = tagged('journal', [
  adminRoute({
    method: 'GET', path: '/journal',
    query: journalQuerySchema,
    doc: {
      summary: 'Journal entries between two instants (default: the last hour), oldest first',
      responses: {
        '200': jsonAnswer(
          {
            type: 'object',
            required: ['from', 'to', 'limit', 'count', 'entries'],
            properties: { from: instant, to: instant, limit: { type: 'integer' }, count: { type: 'integer' }, entries: { type: 'array', items: ref('JournalEntry') } },
          },
          'Entries',
        ),
      },
    },
    handle: async (deps, { query: { from, to, limit } }) => {
      const entries = await deps.journal.range(from, to, limit);
      return { body: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), limit, count: entries.length, entries } };
    },
  }),
]);
