import { RetryableError } from '@singleshot/core';
import type { CallContext, LookupResult } from './provider';
import type { TwilioMessagesApi } from './twilio-messages-api';

/** WhatsApp's customer service window: 24 hours from the customer's last message. */
export const SESSION_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * Taken off the window's end, for the distance between our clock and
 * Twilio's: a message near the edge goes as a template rather than risk 63016.
 */
export const SESSION_MARGIN_MS = 5 * 60 * 1000;
/** Clock distance allowed between `since` and Twilio's `date_created` (whole seconds, another clock). */
const LOOKUP_SKEW_MS = 5 * 60 * 1000;
/** Messages per list page, and pages one lookup reads before giving up without a verdict. */
export const WHATSAPP_LOOKUP_PAGE_SIZE = 50;
export const WHATSAPP_LOOKUP_MAX_PAGES = 10;

/**
 * Whether the customer wrote to us within the window: the newest message
 * from their address to our sender (`From=<customer>&To=<ours>&PageSize=1`;
 * Twilio lists newest first). A failed read throws (never assume a window).
 */
export async function insideSession(api: TwilioMessagesApi, customer: string, ours: string, now: number, ctx: CallContext): Promise<boolean> {
  const page = await api.list({ From: customer, To: ours, PageSize: '1' }, ctx);
  const last = page.messages[0];
  return last !== undefined && now - last.createdAt < SESSION_WINDOW_MS - SESSION_MARGIN_MS;
}

/** Where to look for a copy and how to recognize one. */
export interface CopySearch {
  /** `whatsapp:+…` of the recipient. */
  to: string;
  /** Our `whatsapp:+…` sender. */
  from: string;
  /** No copy can be older than this (ms): the message's first arrival. */
  since: number;
  /** Bodies a copy of ours can have (the free-form text, a configured template's filled text). */
  bodies: readonly string[];
  /** A template may have been sent whose body cannot be predicted: any other message is a possible copy. */
  unpredictable: boolean;
}

/**
 * Finds a copy of an in-doubt send in the recipient's messages from our
 * sender (`To=<recipient>&From=<ours>`, newest first, pages followed until a
 * message older than `since`). Twilio keeps no key of ours on a message (the
 * status callback URL is not part of the resource), so a copy is recognized by
 * its body. "Not found" only after the whole window was read; more than
 * WHATSAPP_LOOKUP_MAX_PAGES pages, or a message there that may be an
 * unrecognizable template copy, throws (no verdict).
 *
 * No `DateSent` filter: a message still queued at Twilio has no `date_sent`
 * yet and would be missed, which is the one answer a lookup must not give.
 */
export async function findCopy(api: TwilioMessagesApi, search: CopySearch, name: string, ctx: CallContext): Promise<LookupResult> {
  const oldest = search.since - LOOKUP_SKEW_MS;
  let others = 0;
  let query: Record<string, string> | string = { To: search.to, From: search.from, PageSize: String(WHATSAPP_LOOKUP_PAGE_SIZE) };
  for (let page = 0; page < WHATSAPP_LOOKUP_MAX_PAGES; page++) {
    const { messages, nextPageUri } = await api.list(query, ctx);
    for (const m of messages) {
      if (m.createdAt < oldest) return verdict(others, search, name);
      if (m.direction.startsWith('outbound') && search.bodies.includes(m.body)) return { found: true, externalId: m.sid };
      others += 1;
    }
    if (!nextPageUri) return verdict(others, search, name);
    query = nextPageUri;
  }
  throw new RetryableError(`${name}: more than ${WHATSAPP_LOOKUP_MAX_PAGES * WHATSAPP_LOOKUP_PAGE_SIZE} messages to the recipient since the first arrival; no verdict`, 'LOOKUP_TOO_MUCH_HISTORY');
}

function verdict(others: number, search: CopySearch, name: string): LookupResult {
  if (others > 0 && search.unpredictable) {
    throw new RetryableError(`${name}: ${others} message(s) to the recipient since the first arrival, and a template copy cannot be recognized (set the template's text); no verdict`, 'LOOKUP_AMBIGUOUS');
  }
  return { found: false };
}
