import { escapeHtml, PAGE_STYLE } from './story-page';
import type { TenantsAnswer } from './tenants-view';

/**
 * The tenants and their share (docs/tenants.md): weight, bound, what waits in
 * the fair queues and whether the bound is reached. `now` is the moment the
 * page was made.
 */
export function tenantsPage(answer: TenantsAnswer, now: number): string {
  const rows = answer.tenants
    .map(
      (t) =>
        `<tr data-tenant="${escapeHtml(t.tenant)}"><td>${escapeHtml(t.tenant)}</td><td data-weight>${t.weight}</td><td data-max-pending>${t.maxPending ?? '<span class="detail">none</span>'}</td><td data-waiting>${t.waiting}</td><td data-at-limit>${t.atLimit ? '<strong>at its bound: events answer 429</strong>' : ''}</td></tr>`,
    )
    .join('');
  const share = answer.fairShare
    ? `Fair share is on: each deliver partition chooses between the tenants with work waiting, by weight, with at most ${answer.window} operations moved ahead.`
    : 'Fair share is off: deliver jobs go first in, first out.';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tenants</title><style>${PAGE_STYLE}</style></head><body>
<nav><a href="/admin/queues">Queues</a> · <a href="/admin/story">Story of a notification</a> · <a href="/admin/digests">Open digests</a> · <a href="/admin/tenants">Tenants</a></nav>
<h1>Tenants</h1>
<p data-fair-share="${answer.fairShare}">${escapeHtml(share)} Page made at <span class="mono">${new Date(now).toISOString()}</span>.</p>
<table><tr><th>tenant</th><th>weight</th><th>maxPending</th><th>waiting</th><th></th></tr>${rows}</table></body></html>`;
}
