import { describe, expect, it } from 'vitest';
import { htmlToText } from './html-text';

describe('htmlToText', () => {
  it('keeps visible text, drops script/style/head, breaks lines at blocks', () => {
    const html =
      '<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head><body>' +
      '<script type="x">alert("<p>no</p>")</script><p>Hello&nbsp;<b>World</b></p><div>a &amp; b &lt;c&gt;</div>' +
      '<table><tr><td>x</td><td>y</td></tr></table><!-- hidden --></body></html>';
    expect(htmlToText(html)).toBe('Hello World\n\na & b <c>\n\nx y');
  });

  it('decodes numeric and common named entities and leaves unknown ones', () => {
    expect(htmlToText('&#228;&#x00F6;&bdquo;x&ldquo; &euro;5 &unknown; &#0;')).toBe('äö„x“ €5 &unknown;');
  });

  it('keeps a literal "<" that starts no tag', () => {
    expect(htmlToText('a < b and 1 <2')).toBe('a < b and 1 <2');
  });

  it('stops at an unterminated tag, script or comment rather than scanning forever', () => {
    expect(htmlToText('before<div class="x')).toBe('before');
    expect(htmlToText('before<script>never closed')).toBe('before');
    expect(htmlToText('before<!-- never closed')).toBe('before');
  });

  it('handles hostile floods in one pass', () => {
    // Quadratic scanners never finish these; a linear one returns the expected text.
    expect(htmlToText('<'.repeat(200_000))).toBe('<'.repeat(200_000));
    expect(htmlToText('<script>'.repeat(50_000) + '</script>tail')).toBe('tail');
    expect(htmlToText('<div>'.repeat(100_000) + 'deep')).toBe('deep');
  });
});
