import type { IngestInput } from '@singleshot/core';
import type { RouteMatch } from '@singleshot/config';

/** `*` any run, `?` one character; case-insensitive (addresses). */
export function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 'i');
}

/** The bare address out of `Name <a@b>`, lower-cased. */
export function bareAddress(value: string): string {
  const bracketed = value.match(/<([^<>]+)>/);
  return (bracketed ? (bracketed[1] as string) : value).trim().toLowerCase();
}

// Route regexes come from config and are compiled once per process.
const regexCache = new Map<string, RegExp>();
function regex(source: string): RegExp {
  let re = regexCache.get(source);
  if (!re) {
    re = new RegExp(source);
    regexCache.set(source, re);
  }
  return re;
}

/** True when every given field of `match` matches the input (an empty match matches all). */
export function routeMatches(match: RouteMatch, input: IngestInput): boolean {
  if (match.source !== undefined && match.source !== input.source) return false;
  const type = input.kind === 'event' ? input.type : 'mail';
  if (match.type !== undefined && match.type !== type) return false;
  if (input.kind === 'event') {
    // Mail-only criteria never match an API event.
    return match.mailbox === undefined && match.sender === undefined && match.subject === undefined && match.headers === undefined;
  }
  if (match.mailbox !== undefined && match.mailbox !== input.mailboxId) return false;
  if (match.sender !== undefined && !globToRegExp(match.sender).test(bareAddress(input.from))) return false;
  if (match.subject !== undefined && !regex(match.subject).test(input.subject)) return false;
  for (const [name, pattern] of Object.entries(match.headers ?? {})) {
    const value = input.headers[name];
    if (value === undefined || !regex(pattern).test(value)) return false;
  }
  return true;
}
