import { RetryableError, SingleshotError } from '@singleshot/core';
import { jsonObject, type ApiTransport } from './api-transport';
import { SLACK_EVENT_TYPE } from './slack-event';
import type { CallContext, LookupResult, LookupTarget } from './provider';

/** Pages of `conversations.history` (200 messages each) one lookup reads before giving up without a verdict. */
export const SLACK_LOOKUP_MAX_PAGES = 10;
/** Clock distance allowed between our `since` and Slack's message timestamps. */
const SKEW_SECONDS = 300;

interface SlackCall {
  transport: ApiTransport;
  endpoint: string;
  token: string;
  name: string;
}

/** One Web API method call; anything but `ok: true` throws RetryableError (a lookup never guesses). */
async function method(call: SlackCall, name: string, args: Record<string, unknown>, ctx: CallContext): Promise<Record<string, unknown>> {
  let res;
  try {
    res = await call.transport.request(
      {
        url: new URL(`${call.endpoint.replace(/\/+$/, '')}/${name}`),
        method: 'POST',
        headers: { authorization: `Bearer ${call.token}`, 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
        body: JSON.stringify(args),
      },
      ctx,
      (status) => new RetryableError(`${call.name}: ${name} answered HTTP ${status}`, `LOOKUP_HTTP_${status}`),
    );
  } catch (err) {
    const code = err instanceof SingleshotError ? err.code : 'UNKNOWN';
    throw new RetryableError(`${call.name}: ${name} failed (${code})`, code.startsWith('LOOKUP_') ? code : `LOOKUP_${code}`, { cause: err });
  }
  const answer = res.status === 200 && !res.truncated ? jsonObject(res.body) : undefined;
  if (answer?.ok === true) return answer;
  const error = typeof answer?.error === 'string' ? answer.error.toUpperCase() : `HTTP_${res.status}`;
  throw new RetryableError(`${call.name}: ${name} answered ${error}`, `LOOKUP_SLACK_${error}`);
}

/**
 * Looks for a copy of the operation in the recipient's conversation: every
 * message since `target.since` (minus a clock margin) is read, and one whose
 * metadata names the operation key is the copy (its `ts` the external id).
 * "Not found" is said only after the whole window was read; a window longer
 * than SLACK_LOOKUP_MAX_PAGES pages throws instead. A user-id recipient is
 * looked up in the app's DM with that user (`conversations.open`).
 */
export async function slackLookup(call: SlackCall, operationKey: string, ctx: CallContext, target: LookupTarget | undefined): Promise<LookupResult> {
  if (!target) throw new RetryableError(`${call.name}: lookup needs the recipient`, 'LOOKUP_NO_TARGET');
  let channel = target.recipient;
  if (/^[UW]/.test(channel)) {
    const opened = await method(call, 'conversations.open', { users: channel, return_im: false }, ctx);
    const id = (opened.channel as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' || !id) throw new RetryableError(`${call.name}: conversations.open without a channel id`, 'LOOKUP_NO_CHANNEL');
    channel = id;
  }
  const oldest = Math.max(0, Math.floor(target.since / 1000) - SKEW_SECONDS);
  let cursor: string | undefined;
  for (let page = 0; page < SLACK_LOOKUP_MAX_PAGES; page++) {
    const answer = await method(call, 'conversations.history', { channel, oldest: String(oldest), limit: 200, include_all_metadata: true, ...(cursor ? { cursor } : {}) }, ctx);
    const messages = Array.isArray(answer.messages) ? (answer.messages as Array<Record<string, unknown>>) : [];
    for (const m of messages) {
      const meta = m.metadata as { event_type?: unknown; event_payload?: { operation_key?: unknown } } | undefined;
      if (meta?.event_type === SLACK_EVENT_TYPE && meta.event_payload?.operation_key === operationKey && typeof m.ts === 'string') {
        return { found: true, externalId: m.ts };
      }
    }
    const next = (answer.response_metadata as { next_cursor?: unknown } | undefined)?.next_cursor;
    if (answer.has_more !== true) return { found: false };
    if (typeof next !== 'string' || !next) throw new RetryableError(`${call.name}: history has more without a cursor`, 'LOOKUP_NO_CURSOR');
    cursor = next;
  }
  throw new RetryableError(`${call.name}: more than ${SLACK_LOOKUP_MAX_PAGES * 200} messages since the first arrival; no verdict`, 'LOOKUP_TOO_MUCH_HISTORY');
}
