import { sha256Hex } from './hash';

/**
 * Identity keys (docs/protocol.md "Names"). Every key is built from stable ids only:
 * never arrival time, IMAP UID, queue attempt or flags.
 */

/** Message key of a mail with a usable, already normalized Message-ID. */
export function mailMessageKey(mailboxId: string, normalizedMessageId: string): string {
  return sha256Hex(`${mailboxId}:${normalizedMessageId}`);
}

/** Message key of an API event: the producer's own stable event id. */
export function eventMessageKey(source: string, producerEventId: string): string {
  return sha256Hex(`${source}:${producerEventId}`);
}

/** A named, versioned action, e.g. `notify_owner:v1`. */
export interface ActionRef {
  name: string;
  version: string;
}

const ACTION_NAME = /^[a-z][a-z0-9_.-]{0,63}$/;
const ACTION_VERSION = /^v[0-9]{1,6}$/;

/** Parses `name` or `name:vN` (default version `v1`). Throws on anything else. */
export function parseAction(spec: string): ActionRef {
  const [name, version = 'v1', ...rest] = spec.split(':');
  if (rest.length > 0 || !name || !ACTION_NAME.test(name) || !ACTION_VERSION.test(version)) {
    throw new TypeError(`invalid action "${spec}": expected name or name:vN (e.g. notify_owner:v1)`);
  }
  return { name, version };
}

export function formatAction(action: ActionRef): string {
  return `${action.name}:${action.version}`;
}

/**
 * Recipients compare case-insensitively for addresses (mailbox providers do in
 * practice) and exactly for anything else (webhook targets, user ids).
 */
export function normalizeRecipient(recipient: string): string {
  const trimmed = recipient.trim();
  return trimmed.includes('@') ? trimmed.toLowerCase() : trimmed;
}

/** Operation key: one action on one message for one recipient on one channel. */
export function operationKey(input: {
  messageKey: string;
  action: ActionRef;
  recipient: string;
  channel: string;
}): string {
  const { messageKey, action, recipient, channel } = input;
  return sha256Hex(`${messageKey}:${action.name}:${normalizeRecipient(recipient)}:${channel}:${action.version}`);
}

/**
 * Document key: one document of one message, by name and version (a render
 * operation's identity). Same message, same document, same version: same key,
 * however many recipients need it and however often the event arrives.
 */
export function documentKey(input: { messageKey: string; name: string; version: string }): string {
  return sha256Hex(`${input.messageKey}:document:${input.name}:${input.version}`);
}
