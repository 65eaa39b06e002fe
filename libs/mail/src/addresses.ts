/**
 * Address headers as plain text (`Name <a@b>` or `a@b`, comma-separated).
 *
 * Both ingest paths pass their From/To through this one function: a raw
 * header (`=?utf-8?Q?J=C3=B6rg?= <j@x.example>`) and a provider's already
 * decoded field (`"Jörg" <j@x.example>`) come out as the same string.
 */
import { parseAddressHeader, type EmailAddress } from 'mailparser';
import { decodeEncodedWords } from './encoded-words';

function formatOne(entry: EmailAddress): string[] {
  if (entry.group) return entry.group.flatMap(formatOne);
  const name = entry.name.replace(/\s+/g, ' ').trim();
  const address = (entry.address ?? '').trim();
  if (name && address) return [`${name} <${address}>`];
  if (address) return [address];
  return name ? [name] : [];
}

/**
 * Formats an address header value. Groups are flattened to their members;
 * a value the address parser makes nothing of is returned decoded and
 * whitespace-collapsed rather than dropped.
 */
export function formatAddressList(value: string): string {
  if (value.trim() === '') return '';
  let formatted: string[] = [];
  try {
    formatted = parseAddressHeader(value).value.flatMap(formatOne);
  } catch {
    // Fall through: hostile input must still give a summary.
  }
  if (formatted.length > 0) return formatted.join(', ');
  return decodeEncodedWords(value).replace(/\s+/g, ' ').trim();
}
