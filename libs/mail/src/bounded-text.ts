/**
 * Size limits and string hygiene for everything a mail summary carries.
 *
 * A `MailInput` travels inside a queue job, a Redis record and every log line
 * about it, so no field of it may grow with the mail. Hostile mail (a 10 MB
 * subject, NUL bytes that truncate C strings in downstream tools) is capped and
 * cleaned here, in one place, so the raw MIME path and the provider webhook
 * path cut at the same points and therefore agree.
 */

/** Defaults and hard caps of the mail summary. */
export const MAIL_LIMITS = {
  /** Raw messages larger than this are summarized from their header block only. */
  maxBytes: 25 * 1024 * 1024,
  /** Default length of `MailInput.excerpt`. */
  excerptChars: 500,
  /** Default budget for the MIME body parse before falling back to headers only. */
  parseTimeoutMs: 20_000,
  /** At most this many header names are kept in `MailInput.headers`. */
  maxHeaders: 100,
  maxHeaderNameChars: 200,
  maxHeaderValueChars: 2_000,
  maxSubjectChars: 1_000,
  maxAddressChars: 2_000,
  maxDateChars: 200,
  maxNoteChars: 500,
  /**
   * Work bound: a header value is cut to this many characters before it is
   * decoded or address-parsed, so a 10 MB header costs no more than a long one.
   * Well above the Message-ID limit, so an over-long id still reads as too long.
   */
  maxWorkChars: 16_384,
} as const;

/** Removes NUL characters, which some MTAs pass through and some consumers choke on. */
export function stripNul(value: string): string {
  return value.includes('\u0000') ? value.replace(/\u0000/g, '') : value;
}

/**
 * Cuts `value` to at most `max` UTF-16 units without leaving half of a
 * surrogate pair at the end (a lone surrogate is invalid in JSON consumers).
 */
export function capChars(value: string, max: number): string {
  if (value.length <= max) return value;
  let cut = value.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}

/** NUL-free, trimmed and capped: the form every summary string takes. */
export function cleanText(value: string | null | undefined, max: number): string {
  if (value == null) return '';
  return capChars(stripNul(value).trim(), max);
}
