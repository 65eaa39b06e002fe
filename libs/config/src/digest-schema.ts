import { z } from 'zod';
import { isValidTimeZone } from '@singleshot/core';
import { durationMs } from './primitives';

const timeZone = z.string().refine(isValidTimeZone, 'expected an IANA time zone such as Europe/Berlin');

/** The most items a digest can hold; past `maxItems` (at most this) a digest closes early. */
export const DIGEST_MAX_ITEMS = 1_000;

/**
 * Gathers a route's notifications into one message per window (docs/digests.md):
 * the events of one recipient and one rendered `key` join one open digest,
 * which is flushed as one operation when its window ends, `maxItems` is
 * reached or the next item would pass `maxBytes`.
 */
export const digestSchema = z.strictObject({
  key: z
    .string()
    .min(1)
    .optional()
    .describe('Template over the event (`{{data.supplierId}}`) that splits a recipient\'s digests; default: one digest per recipient.'),
  window: z
    .union([
      durationMs,
      z.strictObject({
        daily: z.string().regex(/^([01]\d|2[0-3]):([0-5]\d)$/, 'expected HH:MM (24 h)').describe('Local time the digest closes each day, `HH:MM`.'),
        timezone: timeZone.describe('IANA zone of `daily`.'),
      }),
    ])
    .describe('How long a digest gathers: a duration (`15m`, `1h`), or `{ daily: "08:00", timezone }` (closes at that local time).'),
  maxItems: z.int().min(1).max(DIGEST_MAX_ITEMS).default(100).describe(`Close a digest early once it holds this many items (1–${DIGEST_MAX_ITEMS}).`),
  mode: z
    .enum(['fixed', 'aligned'])
    .default('fixed')
    .describe('`fixed`: a window starts with its first event; `aligned`: calendar windows (multiples of the duration since the epoch). A daily window is always a calendar window.'),
  maxItemBytes: z.int().min(64).max(65_536).default(4_096).describe('Largest item (the event\'s data as JSON); a larger one joins with its data left out (`truncated: true`).'),
  maxBytes: z.int().min(1_024).max(1_048_576).default(262_144).describe('Largest digest (its items\' JSON); an item that would pass it closes the digest and opens the next.'),
});

export type DigestConfig = z.output<typeof digestSchema>;
