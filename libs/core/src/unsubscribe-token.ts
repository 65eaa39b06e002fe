import { createHmac, timingSafeEqual } from 'node:crypto';

/** What an unsubscribe link stands for: this recipient, out of this category on this channel. */
export interface UnsubscribeClaim {
  recipient: string;
  channel: string;
  category: string;
  /** Expiry, ms since the epoch. */
  exp: number;
}

/** A token checked: its claim, or why it is refused. */
export type UnsubscribeVerdict = { ok: true; claim: UnsubscribeClaim } | { ok: false; reason: 'invalid' | 'expired' };

// Tokens sit in a URL path: bound the work a forged one can cause before the HMAC.
const MAX_TOKEN_CHARS = 2_048;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function mac(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(`unsubscribe\n${payload}`).digest('base64url');
}

/**
 * `<base64url JSON {recipient, channel, category, exp}>.<base64url HMAC-SHA256>`:
 * the link itself carries what it unsubscribes from, so answering it needs no
 * lookup, and the signature covers every field, so no one can point a link
 * at another recipient, category or expiry. Pure computation, no I/O.
 */
export function signUnsubscribeToken(claim: UnsubscribeClaim, secret: string): string {
  const payload = Buffer.from(JSON.stringify({ r: claim.recipient, ch: claim.channel, c: claim.category, e: Math.floor(claim.exp) })).toString('base64url');
  return `${payload}.${mac(payload, secret)}`;
}

/** Checks a token's signature, then its expiry (a forged token is `invalid`, never `expired`). */
export function verifyUnsubscribeToken(token: string, secret: string, now: number = Date.now()): UnsubscribeVerdict {
  const invalid = { ok: false, reason: 'invalid' } as const;
  if (token.length > MAX_TOKEN_CHARS) return invalid;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return invalid;
  const payload = token.slice(0, dot);
  const sig = token.slice(dot + 1);
  if (!BASE64URL.test(payload) || !BASE64URL.test(sig)) return invalid;
  const expected = Buffer.from(mac(payload, secret));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return invalid;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return invalid;
  }
  const p = parsed as { r?: unknown; ch?: unknown; c?: unknown; e?: unknown };
  if (typeof p.r !== 'string' || !p.r || typeof p.ch !== 'string' || !p.ch || typeof p.c !== 'string' || !p.c || typeof p.e !== 'number' || !Number.isFinite(p.e)) return invalid;
  if (p.e < now) return { ok: false, reason: 'expired' };
  return { ok: true, claim: { recipient: p.r, channel: p.ch, category: p.c, exp: p.e } };
}
