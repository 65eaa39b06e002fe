/**
 * RFC 5322 Message-ID normalization.
 *
 * A Message-ID is `"<" id-left "@" id-right ">"` surrounded by optional CFWS.
 * Real mail is sloppier: folded headers, comments, missing brackets, several ids
 * from broken clients. We accept what maps to one stable id and refuse the rest
 * (the caller then falls back to the fingerprint and counts it).
 *
 * Case: id-left is case-sensitive (RFC 5322 3.6.4 compares ids octet by octet),
 * but id-right is a domain in practice and some gateways rewrite its case, so the
 * right side is lower-cased. Two ids that differ only in the local part's case stay
 * different: merging two different mails is worse than notifying twice.
 */

/** Longest id we accept: RFC 5322 line limit (998) minus "Message-ID: <>". */
export const MAX_MESSAGE_ID_LENGTH = 984;

export type MessageIdResult =
  | { ok: true; id: string }
  | { ok: false; reason: 'missing' | 'malformed' | 'too_long' };

/** Removes RFC 5322 comments `( ... )`, honouring nesting and quoted-pairs. */
function stripComments(value: string): string {
  let out = '';
  let depth = 0;
  let inQuote = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] as string;
    if (ch === '\\' && (depth > 0 || inQuote)) {
      if (depth === 0) out += ch + (value[i + 1] ?? '');
      i++;
      continue;
    }
    if (depth === 0 && ch === '"') inQuote = !inQuote;
    if (!inQuote && ch === '(') {
      depth++;
      continue;
    }
    if (!inQuote && ch === ')' && depth > 0) {
      depth--;
      continue;
    }
    if (depth === 0) out += ch;
  }
  return out;
}

/**
 * Normalizes a raw Message-ID header value (possibly folded, commented, or
 * missing its angle brackets) to `id-left@id-right-lowercased`, without brackets.
 */
export function normalizeMessageId(raw: string | null | undefined): MessageIdResult {
  if (raw == null) return { ok: false, reason: 'missing' };
  // Unfold (CRLF + WSP) and drop NULs and other controls some MTAs let through.
  const unfolded = raw.replace(/\r?\n[ \t]+/g, ' ').replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '');
  const uncommented = stripComments(unfolded).trim();
  if (uncommented === '') return { ok: false, reason: 'missing' };

  let candidate: string;
  const bracketed = uncommented.match(/<([^<>]*)>/);
  if (bracketed) {
    candidate = (bracketed[1] as string).trim();
  } else {
    // No brackets: accept a lone token (common from scripts), not a phrase.
    if (/\s/.test(uncommented)) return { ok: false, reason: 'malformed' };
    candidate = uncommented;
  }
  // Whitespace inside the brackets is folding residue, never part of the id.
  candidate = candidate.replace(/\s+/g, '');
  if (candidate.length > MAX_MESSAGE_ID_LENGTH) return { ok: false, reason: 'too_long' };
  const at = candidate.lastIndexOf('@');
  if (at <= 0 || at === candidate.length - 1) return { ok: false, reason: 'malformed' };
  const left = candidate.slice(0, at);
  const right = candidate.slice(at + 1).toLowerCase();
  if (/[<>]/.test(left) || /[<>@]/.test(right)) return { ok: false, reason: 'malformed' };
  return { ok: true, id: `${left}@${right}` };
}
