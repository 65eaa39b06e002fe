/**
 * RFC 2047 encoded-word decoding (`=?charset?B|Q?text?=`) for unstructured
 * header values such as Subject.
 *
 * Written here rather than borrowed from the parser so the raw MIME path and
 * the provider webhook path run the same decoder over the same strings: a
 * value a provider already decoded contains no encoded words and passes
 * through unchanged, so both paths meet on the decoded form.
 */

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

interface Word {
  charset: string;
  bytes: Buffer;
}

function wordBytes(encoding: string, text: string): Buffer {
  if (encoding === 'B' || encoding === 'b') return Buffer.from(text, 'base64');
  // Q: "_" is a space, "=XX" a byte, everything else itself (RFC 2047 4.2).
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '_') {
      bytes.push(0x20);
    } else if (ch === '=' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(ch.charCodeAt(0) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/**
 * Decodes bytes in a declared charset. Unknown or unsupported charsets
 * (UTF-7, made-up names) fall back to UTF-8 with replacement characters:
 * a readable-enough subject beats a crash or a dropped mail.
 */
export function decodeCharset(bytes: Uint8Array, charset: string): string {
  // RFC 2231 allows a language suffix: "utf-8*en".
  const label = charset.split('*')[0]?.trim().toLowerCase() || 'utf-8';
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function decodeRun(words: Word[]): string {
  // Adjacent words in one charset are joined as bytes first: encoders split
  // multi-byte characters across words (common in Japanese and Chinese mail).
  let out = '';
  let i = 0;
  while (i < words.length) {
    const charset = (words[i] as Word).charset.toLowerCase();
    const chunk: Buffer[] = [];
    while (i < words.length && (words[i] as Word).charset.toLowerCase() === charset) {
      chunk.push((words[i] as Word).bytes);
      i++;
    }
    out += decodeCharset(Buffer.concat(chunk), charset);
  }
  return out;
}

/**
 * Replaces every RFC 2047 encoded word in `value` with its decoded text.
 * Whitespace between two adjacent encoded words is dropped (RFC 2047 6.2);
 * anything that is not a well-formed encoded word is left as written.
 */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  let out = '';
  let last = 0;
  let run: Word[] = [];
  ENCODED_WORD.lastIndex = 0;
  for (let m = ENCODED_WORD.exec(value); m !== null; m = ENCODED_WORD.exec(value)) {
    const between = value.slice(last, m.index);
    if (run.length > 0 && !/^[ \t\r\n]*$/.test(between)) {
      out += decodeRun(run) + between;
      run = [];
    } else if (run.length === 0) {
      out += between;
    }
    run.push({ charset: m[1] as string, bytes: wordBytes(m[2] as string, m[3] as string) });
    last = m.index + m[0].length;
  }
  if (run.length > 0) out += decodeRun(run);
  return out + value.slice(last);
}
