import type { Story, StoryEvent } from '@singleshot/story';

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const COLORS: Record<StoryEvent['kind'], string> = {
  arrival: '#5b7bd5',
  queued: '#5b7bd5',
  decided: '#7a5bd5',
  claim: '#8a8a8a',
  attempt: '#c08a2b',
  in_doubt: '#d5822b',
  reconcile: '#2ba3c0',
  sent: '#2f9e44',
  dead: '#c92a2a',
  dlq: '#c92a2a',
  replayed: '#9c36b5',
  suppressed: '#868e96',
  journal: '#495057',
};

/** The dashboard pages' style sheet (inline: the pages' content security policy allows no other source). */
export const PAGE_STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#212529;background:#fff}
h1{font-size:20px;margin:0 0 12px}h2{font-size:16px;margin:24px 0 8px}
code,.mono{font-family:ui-monospace,monospace;font-size:12.5px}
table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #e9ecef;text-align:left;vertical-align:top}
th{font-weight:600;color:#495057}
.facts td:first-child{color:#6c757d}
form{margin:0 0 16px}input[name=key]{width:40em;font-family:ui-monospace,monospace;padding:4px}
.axis{position:relative;height:26px;border-bottom:2px solid #adb5bd;margin:8px 0 4px}
.axis span{position:absolute;top:6px;width:12px;height:12px;border-radius:6px;margin-left:-6px}
.kind{display:inline-block;min-width:72px;padding:1px 6px;border-radius:4px;color:#fff;font-size:12px;text-align:center}
.step td{border-bottom:1px solid #f1f3f5}.detail{color:#6c757d;font-size:12.5px}
.problem{padding:12px;border:1px solid #f5c2c7;background:#f8d7da;color:#842029;border-radius:4px}
`;

/** A page of the dashboard's story section (same frame for the story, the search and errors). */
function page(title: string, body: string, key = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<form method="get" action="/admin/story" role="search"><label>Message or operation key <input name="key" value="${escapeHtml(key)}" placeholder="64 hex characters" autocomplete="off"></label> <button type="submit">Show story</button></form>
${body}</body></html>`;
}

/** The search page: a box for a key. */
export function searchPage(): string {
  return page('Story of a notification', '<p>Enter the message key ingest answered, or an operation key (from the journal, the DLQ or a log line).</p>');
}

/** A problem page (bad key, unknown key): the problem in words, the search box to try again. */
export function problemPage(title: string, problem: string, key: string): string {
  return page(title, `<p class="problem" data-problem>${escapeHtml(problem)}</p>`, key);
}

/** The story: facts, operations, a time axis, then every step in order. */
export function storyPage(story: Story): string {
  const facts: Array<[string, string]> = [
    [story.kind, story.key],
    ...(story.kind === 'operation' && story.messageKey ? ([['message', story.messageKey]] as Array<[string, string]>) : []),
    ['routes', story.routes.join(', ') || '(none)'],
    ['trace id', story.traceId ?? '(not traced)'],
  ];
  const factRows = facts.map(([name, value]) => `<tr><td>${escapeHtml(name)}</td><td class="mono" data-fact="${escapeHtml(name)}">${escapeHtml(value)}</td></tr>`).join('');
  const opRows = story.operations
    .map(
      (op) =>
        `<tr data-operation="${op.operationKey}"><td class="mono"><a href="/admin/story/${op.operationKey}">${op.operationKey.slice(0, 16)}…</a></td><td data-status>${escapeHtml(op.status)}</td><td>${escapeHtml(op.recipient)}</td><td>${escapeHtml(op.channel)}</td><td>${escapeHtml(op.route)}</td><td>${escapeHtml(op.fence)}</td><td>${op.attempts}</td><td>${op.replays}</td><td class="mono">${escapeHtml(op.provider)} ${escapeHtml(op.externalId)}</td></tr>`,
    )
    .join('');
  const first = story.events[0]?.at ?? 0;
  const span = Math.max(1, (story.events[story.events.length - 1]?.at ?? first) - first);
  const dots = story.events
    .map((e) => `<span title="${escapeHtml(`${e.kind}: ${e.title}`)}" style="left:${(((e.at - first) / span) * 100).toFixed(2)}%;background:${COLORS[e.kind]}"></span>`)
    .join('');
  const steps = story.events
    .map((e, i) => {
      const detail = Object.entries(e.detail).map(([k, v]) => `${escapeHtml(k)}=${escapeHtml(v)}`).join(' · ');
      return `<tr class="step" data-step="${i}" data-kind="${e.kind}"><td class="mono">${new Date(e.at).toISOString()}</td><td class="mono">+${e.at - first} ms</td><td><span class="kind" style="background:${COLORS[e.kind]}">${e.kind}</span></td><td class="mono">${e.operationKey ? escapeHtml(e.operationKey.slice(0, 12)) : 'message'}</td><td><div data-title>${escapeHtml(e.title)}</div>${detail ? `<div class="detail">${detail}</div>` : ''}</td></tr>`;
    })
    .join('');
  const body = `<table class="facts">${factRows}</table>
<h2>Operations</h2><table><tr><th>operation</th><th>status</th><th>recipient</th><th>channel</th><th>route</th><th>fence</th><th>attempts</th><th>replays</th><th>provider / id</th></tr>${opRows || '<tr><td colspan="9">none (not decided yet, or no route matched)</td></tr>'}</table>
<h2>Story</h2><div class="axis" aria-hidden="true">${dots}</div>
<table><tr><th>time (UTC)</th><th>since first</th><th>step</th><th>of</th><th>what happened</th></tr>${steps}</table>`;
  return page(`Story of ${story.kind} ${story.key.slice(0, 16)}…`, body, story.key);
}
