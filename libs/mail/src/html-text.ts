/**
 * HTML to plain text for mails that have no text part.
 *
 * Deliberately small and single-pass: a hostile HTML part (deep nesting,
 * unclosed tags, megabytes of `<`) costs time linear in its length, and the
 * raw MIME path and the provider webhook path (which hands us HTML as a
 * string) strip it identically. Layout fidelity is not a goal: the result feeds
 * an excerpt and the fallback fingerprint.
 */

/** Elements whose content is never text. */
const SKIPPED = new Set(['script', 'style', 'head', 'title', 'template', 'noscript']);
/** Elements that break a line where they start or end. */
const BLOCK = new Set([
  'br', 'p', 'div', 'tr', 'li', 'ul', 'ol', 'table', 'blockquote', 'hr',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'section', 'article', 'header', 'footer',
]);
const CELL = new Set(['td', 'th']);

/**
 * The named entities marketing and newsletter mail actually uses; anything
 * else is left as written (still readable, and stable across both paths).
 */
const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', shy: '',
  ndash: '\u2013', mdash: '\u2014', hellip: '\u2026', bull: '\u2022', middot: '\u00b7',
  lsquo: '\u2018', rsquo: '\u2019', sbquo: '\u201a', ldquo: '\u201c', rdquo: '\u201d', bdquo: '\u201e',
  laquo: '\u00ab', raquo: '\u00bb', copy: '\u00a9', reg: '\u00ae', trade: '\u2122', deg: '\u00b0',
  euro: '\u20ac', pound: '\u00a3', yen: '\u00a5', cent: '\u00a2', sect: '\u00a7', para: '\u00b6',
  times: '\u00d7', divide: '\u00f7', plusmn: '\u00b1', frac12: '\u00bd', iexcl: '\u00a1', iquest: '\u00bf',
  auml: '\u00e4', ouml: '\u00f6', uuml: '\u00fc', Auml: '\u00c4', Ouml: '\u00d6', Uuml: '\u00dc', szlig: '\u00df',
  aacute: '\u00e1', eacute: '\u00e9', iacute: '\u00ed', oacute: '\u00f3', uacute: '\u00fa',
  agrave: '\u00e0', egrave: '\u00e8', igrave: '\u00ec', ograve: '\u00f2', ugrave: '\u00f9',
  acirc: '\u00e2', ecirc: '\u00ea', icirc: '\u00ee', ocirc: '\u00f4', ucirc: '\u00fb',
  ccedil: '\u00e7', ntilde: '\u00f1', Eacute: '\u00c9', aring: '\u00e5', oslash: '\u00f8', aelig: '\u00e6',
  zwnj: '', zwj: '', lrm: '', rlm: '',
};

function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (whole, body: string) => {
    if (body[0] !== '#') return Object.hasOwn(NAMED, body) ? (NAMED[body] as string) : whole;
    const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '';
    return String.fromCodePoint(code);
  });
}

function tagName(html: string, start: number, end: number): { name: string; closing: boolean } | null {
  const m = /^(\/?)([a-zA-Z][a-zA-Z0-9]{0,15})/.exec(html.slice(start, Math.min(end, start + 20)));
  return m ? { name: (m[2] as string).toLowerCase(), closing: m[1] === '/' } : null;
}

/** Visible text of an HTML document, line structure roughly kept, entities decoded. */
export function htmlToText(html: string): string {
  const out: string[] = [];
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      out.push(html.slice(i));
      break;
    }
    out.push(html.slice(i, lt));
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      if (end === -1) break;
      i = end + 3;
      continue;
    }
    const next = html[lt + 1];
    if (next === undefined || !/[a-zA-Z/!?]/.test(next)) {
      out.push('<'); // a literal "<", e.g. "a < b"
      i = lt + 1;
      continue;
    }
    const gt = html.indexOf('>', lt + 1);
    if (gt === -1) break; // unterminated tag: the rest is markup, not text
    const tag = tagName(html, lt + 1, gt);
    i = gt + 1;
    if (!tag) continue;
    if (!tag.closing && SKIPPED.has(tag.name)) {
      const close = new RegExp(`</${tag.name}[\\s>]`, 'gi');
      close.lastIndex = i;
      const found = close.exec(html);
      if (!found) break;
      const closeEnd = html.indexOf('>', found.index);
      i = closeEnd === -1 ? html.length : closeEnd + 1;
      continue;
    }
    if (BLOCK.has(tag.name)) out.push('\n');
    else if (CELL.has(tag.name)) out.push(' ');
  }
  return decodeEntities(out.join(''))
    .split(/\r?\n/)
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
