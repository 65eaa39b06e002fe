import { cleanText, MAIL_LIMITS } from '../bounded-text';
import type { ParsedMail } from '../mail-input';
import { parseRawMail, type ParseRawMailOptions } from '../parse-raw-mail';
import type { HandOverMeta } from './types';

/**
 * `parseRawMail` for what an `ImapSource` hands over. For a message over the
 * size cap `raw` is only its header block, so the summary takes the real size
 * and the source's note from `meta`: the mail is recorded as truncated, never
 * dropped, and never passed off as a short mail. The message key does not
 * change: it comes from the Message-ID in the header block (a mail without
 * one is fingerprinted over an empty body, a documented limit of the cap).
 */
export async function parseImapMail(
  raw: Buffer,
  meta: HandOverMeta,
  opts: Omit<ParseRawMailOptions, 'mailboxId'> = {},
): Promise<ParsedMail> {
  const parsed = await parseRawMail(raw, { ...opts, mailboxId: meta.mailboxId });
  if (!meta.truncated) return parsed;
  const note = [meta.note, parsed.input.note].filter(Boolean).join('; ');
  return {
    ...parsed,
    input: { ...parsed.input, sizeBytes: meta.sizeBytes, note: cleanText(note, MAIL_LIMITS.maxNoteChars) },
  };
}
