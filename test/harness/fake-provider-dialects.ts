import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { startFakeProviderApi, type FakeAnswer, type FakeDialect, type FakeProviderApi } from './fake-provider-api';

/**
 * The documented request and response shapes of each vendor, for
 * `startFakeProviderApi`. Each dialect checks what the vendor checks first
 * (route, credentials, body shape) and answers a malformed request the way the
 * vendor does, so a provider that sends the wrong shape fails its tests.
 */

const json = (raw: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};
const hex = (n: number) => randomBytes(n).toString('hex');
const bearer = (h: IncomingHttpHeaders) => (typeof h.authorization === 'string' && h.authorization.startsWith('Bearer ') ? h.authorization.slice(7) : undefined);

// ---------------------------------------------------------------------------
// Amazon SES v2: POST /v2/email/outbound-emails (REST-JSON, SigV4, error name in x-amzn-ErrorType)

const sesError = (status: number, type: string, message: string): FakeAnswer => ({
  status,
  headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/`, 'x-amzn-requestid': hex(16) },
  body: { message },
});

export const sesDialect: FakeDialect = {
  parse({ method, path, headers, rawBody }) {
    if (method !== 'POST' || path.split('?')[0] !== '/v2/email/outbound-emails') return { status: 404, body: { message: 'no such route' } };
    const auth = typeof headers.authorization === 'string' ? headers.authorization : '';
    if (!auth.startsWith('AWS4-HMAC-SHA256 Credential=')) return sesError(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    const body = json(rawBody);
    const to = (body?.Destination as { ToAddresses?: unknown[] } | undefined)?.ToAddresses?.[0];
    const tags = (body?.EmailTags as Array<{ Name: string; Value: string }> | undefined) ?? [];
    const simple = (body?.Content as { Simple?: { Subject?: { Data?: unknown } } } | undefined)?.Simple;
    if (typeof body?.FromEmailAddress !== 'string' || typeof to !== 'string' || typeof simple?.Subject?.Data !== 'string') {
      return sesError(400, 'BadRequestException', 'Missing required parameter');
    }
    const key = tags.find((t) => t.Name === 'singleshot-operation')?.Value ?? `${to}\n${simple.Subject.Data}`;
    return { key, recipient: to, body };
  },
  accepted: (id) => ({ status: 200, headers: { 'x-amzn-requestid': hex(16) }, body: { MessageId: id } }),
  newId: (n) => `0100018c${hex(4)}-${hex(4)}-${n.toString().padStart(4, '0')}-0000-000000000000-000000`,
  fault(kind) {
    switch (kind) {
      case 'throttle':
        return sesError(429, 'TooManyRequestsException', 'Maximum sending rate exceeded.');
      case 'server-error':
        return sesError(500, 'InternalServiceErrorException', 'Internal error');
      case 'unavailable':
        return { status: 503, headers: { 'x-amzn-requestid': hex(16) }, body: { message: 'Service Unavailable' } };
      case 'invalid-recipient':
        return sesError(400, 'BadRequestException', 'Illegal address');
      case 'auth':
        return sesError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    }
  },
};

// ---------------------------------------------------------------------------
// SendGrid v3: POST /v3/mail/send, 202 with X-Message-Id, errors as { errors: [{ message, field, help }] }

const sgError = (status: number, message: string, field: string | null = null, headers: Record<string, string> = {}): FakeAnswer => ({
  status,
  headers,
  body: { errors: [{ message, field, help: null }] },
});

export const sendgridDialect: FakeDialect = {
  parse({ method, path, headers, rawBody }) {
    if (method !== 'POST' || path.split('?')[0] !== '/v3/mail/send') return { status: 404, body: { errors: [{ message: 'not found' }] } };
    if (!bearer(headers)) return sgError(401, 'The provided authorization grant is invalid, expired, or revoked');
    const body = json(rawBody);
    const p = (body?.personalizations as Array<{ to?: Array<{ email?: unknown }> }> | undefined)?.[0];
    const to = p?.to?.[0]?.email;
    const content = body?.content as Array<{ type?: unknown; value?: unknown }> | undefined;
    if (typeof to !== 'string' || typeof (body?.from as { email?: unknown } | undefined)?.email !== 'string' || !content?.[0]?.value) {
      return sgError(400, 'The personalizations field is required and must have at least one personalization.', 'personalizations');
    }
    const args = (body?.custom_args ?? {}) as Record<string, unknown>;
    const key = typeof args.operation_key === 'string' ? args.operation_key : `${to}\n${String(body?.subject)}`;
    return { key, recipient: to, body };
  },
  accepted: (id) => ({ status: 202, headers: { 'x-message-id': id } }),
  newId: (n) => `${randomBytes(12).toString('base64url')}${n}`,
  fault(kind) {
    switch (kind) {
      case 'throttle':
        return sgError(429, 'too many requests', null, { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 1) });
      case 'server-error':
        return sgError(500, 'internal server error');
      case 'unavailable':
        return sgError(503, 'service unavailable');
      case 'invalid-recipient':
        return sgError(400, 'Does not contain a valid address.', 'personalizations.0.to.0.email');
      case 'auth':
        return sgError(401, 'The provided authorization grant is invalid, expired, or revoked');
    }
  },
};

// ---------------------------------------------------------------------------
// Twilio: POST /2010-04-01/Accounts/{AccountSid}/Messages.json (form body, basic auth), 201 with `sid`

const twilioError = (status: number, code: number, message: string): FakeAnswer => ({
  status,
  body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
});

export const twilioDialect: FakeDialect = {
  parse({ method, path, headers, rawBody }) {
    const m = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/i.exec(path.split('?')[0] as string);
    if (method !== 'POST' || !m) return twilioError(404, 20404, 'The requested resource was not found');
    const auth = typeof headers.authorization === 'string' && headers.authorization.startsWith('Basic ') ? Buffer.from(headers.authorization.slice(6), 'base64').toString() : '';
    if (auth.split(':')[0] !== m[1] || !auth.split(':')[1]) return twilioError(401, 20003, 'Authenticate');
    const form = new URLSearchParams(rawBody);
    const to = form.get('To');
    const text = form.get('Body');
    if (!to) return twilioError(400, 21604, "A 'To' phone number is required.");
    if (!text) return twilioError(400, 21602, 'Message body is required.');
    if (!form.get('From') && !form.get('MessagingServiceSid')) return twilioError(400, 21603, "A 'From' phone number is required.");
    // Twilio has no key of ours: a copy is the same text to the same number.
    return { key: `${to}\n${text}`, recipient: to, body: Object.fromEntries(form) };
  },
  accepted: (id, parsed) => {
    const b = parsed.body as Record<string, string>;
    return { status: 201, body: { sid: id, status: 'queued', to: b.To, from: b.From ?? null, messaging_service_sid: b.MessagingServiceSid ?? null, body: b.Body, error_code: null } };
  },
  newId: () => `SM${hex(16)}`,
  fault(kind, recipient) {
    switch (kind) {
      case 'throttle':
        return twilioError(429, 20429, 'Too Many Requests');
      case 'server-error':
        return twilioError(500, 20500, 'Internal Server Error');
      case 'unavailable':
        return twilioError(503, 20503, 'Service Unavailable');
      case 'invalid-recipient':
        return twilioError(400, 21211, `The 'To' number ${recipient} is not a valid phone number.`);
      case 'auth':
        return twilioError(401, 20003, 'Authenticate');
    }
  },
};

// ---------------------------------------------------------------------------
// Slack Web API: POST /api/chat.postMessage (Bearer token, JSON), HTTP 200 { ok, ts } or { ok: false, error }

/** Slack's DM channel with a user, as `conversations.open` answers it (and chat.postMessage to a user id lands). */
const dmOf = (recipient: string) => (/^[UW]/.test(recipient) ? `D${recipient.slice(1)}` : recipient);
/** Page size of the fake's `conversations.history`: small, so lookups must follow cursors. */
export const FAKE_SLACK_HISTORY_PAGE = 50;

export const slackDialect: FakeDialect = {
  route({ method, path, headers, rawBody }, taken) {
    const route = path.split('?')[0];
    if (method !== 'POST' || (route !== '/api/conversations.open' && route !== '/api/conversations.history')) return undefined;
    if (!bearer(headers)) return { status: 200, body: { ok: false, error: 'not_authed' } };
    const args = json(rawBody) ?? {};
    if (route === '/api/conversations.open') {
      return typeof args.users === 'string' ? { status: 200, body: { ok: true, channel: { id: dmOf(args.users) } } } : { status: 200, body: { ok: false, error: 'users_list_not_supplied' } };
    }
    if (typeof args.channel !== 'string') return { status: 200, body: { ok: false, error: 'channel_not_found' } };
    const oldest = Number(args.oldest ?? 0);
    const all: Array<Record<string, unknown>> = [];
    for (const entry of taken.values()) {
      const body = entry.body as { channel: string; text: string; metadata?: unknown };
      if (dmOf(body.channel) !== args.channel) continue;
      for (const ts of entry.ids) {
        if (Number(ts) >= oldest) all.push({ type: 'message', ts, text: body.text, ...(args.include_all_metadata === true ? { metadata: body.metadata } : {}) });
      }
    }
    // Newest first, as Slack answers; the cursor is an offset.
    all.sort((a, b) => Number(b.ts) - Number(a.ts));
    const start = Number(args.cursor ?? 0);
    const size = Math.min(Number(args.limit ?? 100), FAKE_SLACK_HISTORY_PAGE);
    const page = all.slice(start, start + size);
    const more = start + size < all.length;
    return { status: 200, body: { ok: true, messages: page, has_more: more, response_metadata: { next_cursor: more ? String(start + size) : '' } } };
  },
  parse({ method, path, headers, rawBody }) {
    if (method !== 'POST' || path.split('?')[0] !== '/api/chat.postMessage') return { status: 404, body: { ok: false, error: 'unknown_method' } };
    if (!bearer(headers)) return { status: 200, body: { ok: false, error: 'not_authed' } };
    const body = json(rawBody);
    if (typeof body?.channel !== 'string') return { status: 200, body: { ok: false, error: 'channel_not_found' } };
    if (typeof body.text !== 'string' || !body.text) return { status: 200, body: { ok: false, error: 'no_text' } };
    const payload = (body.metadata as { event_payload?: { operation_key?: unknown } } | undefined)?.event_payload;
    const key = typeof payload?.operation_key === 'string' ? payload.operation_key : `${body.channel}\n${body.text}`;
    return { key, recipient: body.channel, body };
  },
  accepted: (id, parsed) => ({ status: 200, body: { ok: true, channel: dmOf(parsed.recipient), ts: id, message: { text: (parsed.body as { text: string }).text, ts: id } } }),
  newId: (n) => `${Math.floor(Date.now() / 1000)}.${n.toString().padStart(6, '0')}`,
  fault(kind): FakeAnswer {
    switch (kind) {
      case 'throttle':
        return { status: 429, headers: { 'retry-after': '1' }, body: { ok: false, error: 'ratelimited' } };
      case 'server-error':
        return { status: 500, body: '<html>Internal Server Error</html>', headers: { 'content-type': 'text/html' } };
      case 'unavailable':
        return { status: 503, body: { ok: false, error: 'service_unavailable' } };
      case 'invalid-recipient':
        return { status: 200, body: { ok: false, error: 'channel_not_found' } };
      case 'auth':
        return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    }
  },
};

export const startFakeSes = (): Promise<FakeProviderApi> => startFakeProviderApi(sesDialect);
export const startFakeSendgrid = (): Promise<FakeProviderApi> => startFakeProviderApi(sendgridDialect);
export const startFakeTwilio = (): Promise<FakeProviderApi> => startFakeProviderApi(twilioDialect);
export const startFakeSlack = (): Promise<FakeProviderApi> => startFakeProviderApi(slackDialect);
