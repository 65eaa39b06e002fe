import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { startFakeProviderApi, type FakeAcceptance, type FakeAnswer, type FakeDialect, type FakeProviderApi } from './fake-provider-api';
import { twilioDialect } from './fake-provider-dialects';

/**
 * Twilio's Messages API as WhatsApp senders see it, for
 * `startFakeProviderApi`: `whatsapp:`-prefixed `To`/`From`, `Body` or an
 * approved template (`ContentSid` + `ContentVariables`), the 24-hour rule (a
 * free-form `Body` to a number that has not written within 24 hours is
 * refused with 63016; the real Twilio often reports 63016 later, on the
 * message, which the fake does not model), and `GET …/Messages.json` listing
 * inbound messages and the copies taken, newest first, filtered by `To` and
 * `From`, paged by `PageSize`/`Page` with `next_page_uri`. Like the real
 * Twilio it never deduplicates.
 */
export interface FakeWhatsappApi extends FakeProviderApi {
  /** A message from `customer` to our `sender` (both `whatsapp:+…`), `ageMs` ago. */
  inbound(customer: string, sender: string, ageMs?: number): void;
  /** Approves a template: sends with this ContentSid are taken, listed with `text`'s `{{n}}` filled in. */
  approve(contentSid: string, text: string): void;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const hex = (n: number) => randomBytes(n).toString('hex');
/** Twilio's dates: RFC 2822 in GMT, whole seconds. */
const rfc2822 = (ms: number) => new Date(ms).toUTCString().replace('GMT', '+0000');
const twilioError = (status: number, code: number, message: string): FakeAnswer => ({ status, body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status } });
const basicUser = (h: IncomingHttpHeaders) => {
  const auth = typeof h.authorization === 'string' && h.authorization.startsWith('Basic ') ? Buffer.from(h.authorization.slice(6), 'base64').toString() : '';
  const [user, password] = auth.split(':');
  return password ? user : undefined;
};
const PATH = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/i;

interface Listed {
  sid: string;
  from: string;
  to: string;
  body: string;
  direction: 'inbound' | 'outbound-api';
  at: number;
}

export async function startFakeTwilioWhatsapp(): Promise<FakeWhatsappApi> {
  const inbound: Listed[] = [];
  const templates = new Map<string, string>();
  const createdAt = new Map<string, number>();

  const lastInbound = (customer: string, sender: string) => Math.max(-Infinity, ...inbound.filter((m) => m.from === customer && m.to === sender).map((m) => m.at));
  const listedBody = (form: URLSearchParams): string | undefined => {
    const sid = form.get('ContentSid');
    if (!sid) return form.get('Body') ?? undefined;
    const text = templates.get(sid);
    if (text === undefined) return undefined;
    let variables: Record<string, unknown> = {};
    try {
      variables = JSON.parse(form.get('ContentVariables') ?? '{}') as Record<string, unknown>;
    } catch {
      return undefined;
    }
    return text.replace(/\{\{(\w+)\}\}/g, (_m, k: string) => String(variables[k] ?? ''));
  };
  const listAll = (taken: ReadonlyMap<string, FakeAcceptance>): Listed[] => {
    const out: Listed[] = [...inbound];
    for (const entry of taken.values()) {
      const b = entry.body as { To: string; From: string; ListedBody: string };
      for (const sid of entry.ids) out.push({ sid, from: b.From, to: b.To, body: b.ListedBody, direction: 'outbound-api', at: createdAt.get(sid) ?? 0 });
    }
    return out.sort((a, b) => b.at - a.at);
  };

  const dialect: FakeDialect = {
    route({ method, path, headers }, taken) {
      const [route, search] = path.split('?') as [string, string | undefined];
      const m = PATH.exec(route);
      if (method !== 'GET' || !m) return undefined;
      if (basicUser(headers) !== m[1]) return twilioError(401, 20003, 'Authenticate');
      const q = new URLSearchParams(search ?? '');
      const size = Math.min(Math.max(Number(q.get('PageSize') ?? 50), 1), 1000);
      const page = Number(q.get('Page') ?? 0);
      const all = listAll(taken).filter((x) => (!q.get('To') || x.to === q.get('To')) && (!q.get('From') || x.from === q.get('From')));
      const slice = all.slice(page * size, (page + 1) * size);
      const more = (page + 1) * size < all.length;
      const next = new URLSearchParams(q);
      next.set('Page', String(page + 1));
      const messages = slice.map((x) => ({
        sid: x.sid,
        body: x.body,
        from: x.from,
        to: x.to,
        direction: x.direction,
        status: x.direction === 'inbound' ? 'received' : 'queued',
        date_created: rfc2822(x.at),
        // A queued message has not been sent yet: no date_sent.
        date_sent: x.direction === 'inbound' ? rfc2822(x.at) : null,
        error_code: null,
      }));
      return { status: 200, body: { messages, page, page_size: size, next_page_uri: more ? `${route}?${next.toString()}` : null } };
    },
    parse({ method, path, headers, rawBody }) {
      const m = PATH.exec(path.split('?')[0] as string);
      if (method !== 'POST' || !m) return twilioError(404, 20404, 'The requested resource was not found');
      if (basicUser(headers) !== m[1]) return twilioError(401, 20003, 'Authenticate');
      const form = new URLSearchParams(rawBody);
      const to = form.get('To') ?? '';
      const from = form.get('From') ?? '';
      if (!to) return twilioError(400, 21604, "A 'To' phone number is required.");
      if (!from) return twilioError(400, 21603, "A 'From' phone number is required.");
      if (to.startsWith('whatsapp:') !== from.startsWith('whatsapp:')) return twilioError(400, 63007, 'Twilio could not find a Channel with the specified From address');
      if (!form.get('Body') && !form.get('ContentSid')) return twilioError(400, 21602, 'Message body is required.');
      const body = listedBody(form);
      if (body === undefined) return twilioError(400, 21655, 'The ContentSid is Invalid');
      if (!form.get('ContentSid') && Date.now() - lastInbound(to, from) >= DAY_MS) {
        return twilioError(400, 63016, 'Failed to send freeform message because you are outside the allowed window. If you are using WhatsApp, please use a Message Template.');
      }
      // Twilio has no key of ours: a copy is the same content to the same number.
      const content = form.get('ContentSid') ? `${form.get('ContentSid')}${form.get('ContentVariables') ?? ''}` : (form.get('Body') as string);
      return { key: `${to}\n${content}`, recipient: to, body: { ...Object.fromEntries(form), ListedBody: body } };
    },
    accepted: (id, parsed) => {
      const b = parsed.body as Record<string, string>;
      return { status: 201, body: { sid: id, status: 'queued', to: b.To, from: b.From, body: b.ListedBody, direction: 'outbound-api', date_created: rfc2822(createdAt.get(id) ?? Date.now()), error_code: null } };
    },
    newId: () => {
      const sid = `SM${hex(16)}`;
      createdAt.set(sid, Date.now());
      return sid;
    },
    fault: (kind, recipient) => twilioDialect.fault(kind, recipient),
  };

  const api = await startFakeProviderApi(dialect);
  const reset = api.reset.bind(api);
  return Object.assign(api, {
    inbound(customer: string, sender: string, ageMs = 60_000) {
      inbound.push({ sid: `SM${hex(16)}`, from: customer, to: sender, body: 'hello', direction: 'inbound', at: Date.now() - ageMs });
    },
    approve(contentSid: string, text: string) {
      templates.set(contentSid, text);
    },
    reset() {
      reset();
      inbound.length = 0;
      createdAt.clear();
    },
  });
}
