import type { OpenDigestDetail } from '@singleshot/store';
import { escapeHtml, PAGE_STYLE } from './story-page';

/** What the admin API's `GET /digests` answers and the digests page shows. */
export interface OpenDigestList {
  /** How many digests are open in all (the list holds at most `limit` of them). */
  open: number;
  limit: number;
  /** Soonest close first. */
  digests: Array<Pick<OpenDigestDetail, 'id' | 'group' | 'seq' | 'route' | 'recipient' | 'key' | 'count' | 'openedAt' | 'closeAt'>>;
}

/** `in 42s` while a digest's close time is ahead; `due now` once it has come and its close job has not run yet. */
export function closesIn(closeAt: number, now: number): string {
  const seconds = Math.ceil((closeAt - now) / 1000);
  return seconds > 0 ? `in ${seconds}s` : 'due now';
}

function frame(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${PAGE_STYLE}.when{white-space:nowrap}</style></head><body>
<nav><a href="/admin/queues">Queues</a> · <a href="/admin/story">Story of a notification</a> · <a href="/admin/digests">Open digests</a></nav>
<h1>${escapeHtml(title)}</h1>
${body}</body></html>`;
}

/** A problem with the request (a bad `limit`, no digest store): the problem in words. */
export function digestsProblemPage(problem: string): string {
  return frame('Open digests', `<p class="problem" data-problem>${escapeHtml(problem)}</p>`);
}

/**
 * The open digests, soonest close first: what each gathers (route, recipient,
 * key), how many items it holds, when it opened and when it closes. `now` is
 * passed in so the "in Ns" column is the one moment the page was made.
 */
export function digestsPage(list: OpenDigestList, now: number): string {
  const at = (ms: number) => new Date(ms).toISOString();
  const rows = list.digests
    .map(
      (d) =>
        `<tr data-digest="${escapeHtml(d.id)}"><td data-route>${escapeHtml(d.route)}</td><td data-recipient>${escapeHtml(d.recipient)}</td><td data-key>${d.key === '' ? '<span class="detail">(per recipient)</span>' : escapeHtml(d.key)}</td><td data-count>${d.count}</td><td class="mono when">${at(d.openedAt)}</td><td class="mono when" data-close-at="${d.closeAt}">${at(d.closeAt)} <span class="detail">${closesIn(d.closeAt, now)}</span></td><td class="mono">${escapeHtml(d.id)}</td></tr>`,
    )
    .join('');
  const shown = list.digests.length < list.open ? ` Showing the ${list.digests.length} closing soonest (<code>?limit=</code> up to 1000).` : '';
  const body =
    list.digests.length === 0
      ? '<p data-empty>no open digests</p>'
      : `<p data-open="${list.open}">${list.open} open.${shown} Page made at <span class="mono">${at(now)}</span>; a digest closes when its close job runs, then its flush is an ordinary operation.</p>
<table><tr><th>route</th><th>recipient</th><th>key</th><th>items</th><th>opened (UTC)</th><th>closes at (UTC)</th><th>digest id</th></tr>${rows}</table>`;
  return frame('Open digests', body);
}
