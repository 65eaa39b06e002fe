import type { ServerResponse } from 'node:http';
import type { ErrorCode } from '@singleshot/core';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** What a page is about: the recipient, out of a category on a channel. */
export interface UnsubscribeSubject {
  recipient: string;
  channel: string;
  category: string;
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escape(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1>${escape(title)}</h1>${body}</body></html>`;
}

/** Writes one HTML page; never cached (the answer depends on the token and the record). */
export function sendPage(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
    'cache-control': 'no-store',
    // The pages load nothing and may be framed by no one.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  res.end(html);
}

const what = (s: UnsubscribeSubject) => `<p><b id="recipient">${escape(s.recipient)}</b> will no longer get <b id="category">${escape(s.category)}</b> notifications by <b id="channel">${escape(s.channel)}</b>.</p>`;

/** The GET answer: what the link does, and a button that does it (a POST to the same URL). */
export function confirmPage(s: UnsubscribeSubject, action: string): string {
  return page(
    'Unsubscribe?',
    `${what(s)}<form method="post" action="${escape(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button id="unsubscribe" type="submit">Unsubscribe</button></form>`,
  );
}

/** The POST answer, the same for the first and every repeated POST. */
export function donePage(s: UnsubscribeSubject): string {
  return page('You are unsubscribed', `<p id="done">${escape(s.recipient)} is unsubscribed from ${escape(s.category)} notifications by ${escape(s.channel)}.</p>`);
}

/** A refused link: its code, and what to do. */
export function refusedPage(code: ErrorCode, message: string): string {
  return page('This unsubscribe link cannot be used', `<p>${escape(message)}</p><p>Code: <code id="code">${escape(code)}</code></p>`);
}
